// Benchmark: executions per second of a trivial python3 program and a
// trivial C program (compiled once) under full isolation (rlwb sandbox:
// fresh user/pid/net/mount/ipc/uts/cgroup namespaces, seccomp, rlimits),
// side by side in one run with
//   floor: plain fork + exec + wait, no isolation at all;
//   peer:  bubblewrap (bwrap --unshare-all, read-only /usr, fresh /proc,
//          /dev and /tmp, the same seccomp filter);
// each with 1 caller (latency-bound) and with one caller per CPU
// (throughput-bound). CPU ms/exec counts every process involved (the
// caller, executors, sandboxes, programs), so work moved off the critical
// path still shows. The kernel tears namespaces down asynchronously in its
// own threads (kworkers: the network namespace's cleanup above all), which
// no process is charged for: "kthread ms/exec" is the CPU of all the
// machine's kernel threads during the row, per execution (other activity on
// the machine shows there too: compare with the floor's row).
// A second table gives the latency of one execution (p50) when the caller
// pauses between executions, as a rollout waiting on its reward does: work
// done off the critical path (preparing the next sandbox) is then hidden.
// A third, HumanEval: the 164 canonical solutions x 8 (prompt + solution +
// test + check(entry_point), what the code reward runs) through the
// rlwb-sandbox *service* (the code reward's path: one judge_all batch
// spread over one executor per CPU) against plain python3 subprocesses
// without isolation, one worker thread per CPU. Both warm: each side starts
// the interpreter of its next execution before the program arrives (the
// executor pre-starts python3 in its next sandbox; the plain side keeps one
// python3 per worker waiting on its stdin), and each side makes one untimed
// pass first. Interleaved pairs in alternating order on the same CPUs (run
// it under taskset), every pair's ratio printed, then the spread.
//   bench_sandbox [--seconds S] [--only python3|C|humaneval] [--pairs N]
//   (default 2 s per row, 3 pairs, all three)
#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <numeric>
#include <string>
#include <thread>
#include <vector>

#include "bench/bench_record.h"
#include "core/common/command_line.h"
#include "core/data/humaneval_file.h"
#include "sandbox/client.h"
#include "sandbox/sandbox.h"
#include "sandbox/seccomp_policy.h"
#include "sandbox/service_launch.h"

using namespace rlwb::sandbox;
using Clock = std::chrono::steady_clock;

namespace {

const char* kPython = "print('hi')\n";
const char* kC = "#include <stdio.h>\nint main(void) { puts(\"hi\"); return 0; }\n";

double cpu_ms(int who) {
  rusage ru;
  getrusage(who, &ru);
  return (ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) * 1e3 + (ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) / 1e3;
}
double all_cpu_ms() { return cpu_ms(RUSAGE_SELF) + cpu_ms(RUSAGE_CHILDREN); }

// CPU of every kernel thread (kthreadd and its children), in ms.
double kernel_threads_cpu_ms() {
  static const double ms_per_tick = 1000.0 / static_cast<double>(sysconf(_SC_CLK_TCK));
  double ticks = 0;
  for (const auto& entry : std::filesystem::directory_iterator("/proc")) {
    const std::string name = entry.path().filename();
    if (name.empty() || name[0] < '1' || name[0] > '9') continue;
    std::ifstream in(entry.path() / "stat");
    std::string stat((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    auto close_paren = stat.rfind(')');
    if (close_paren == std::string::npos) continue;
    int ppid = 0;
    unsigned long utime = 0, stime = 0;
    if (std::sscanf(stat.c_str() + close_paren + 2, "%*c %d %*d %*d %*d %*d %*u %*u %*u %*u %*u %lu %lu",
                    &ppid, &utime, &stime) == 3 &&
        (ppid == 2 || name == "2"))
      ticks += static_cast<double>(utime + stime);
  }
  return ticks * ms_per_tick;
}

// fork + exec argv with stdout into a pipe; returns what it printed.
std::string spawn(const std::vector<std::string>& argv, int seccomp_file_fd_target = -1,
                  const std::string& seccomp_path = "") {
  int out[2];
  if (pipe2(out, O_CLOEXEC) != 0) return "";
  std::vector<char*> args;
  for (auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  pid_t pid = fork();
  if (pid == 0) {
    dup2(out[1], 1);
    if (seccomp_file_fd_target >= 0) {
      int fd = open(seccomp_path.c_str(), O_RDONLY);
      dup2(fd, seccomp_file_fd_target);
    }
    execv(args[0], args.data());
    _exit(127);
  }
  close(out[1]);
  std::string got;
  char buf[4096];
  ssize_t n;
  while ((n = read(out[0], buf, sizeof buf)) > 0) got.append(buf, static_cast<size_t>(n));
  close(out[0]);
  int st;
  waitpid(pid, &st, 0);
  return got;
}

struct Row {
  std::string method, lang;
  int callers = 1;
  double per_s = 0, cpu_ms_per_exec = 0, kthread_ms_per_exec = 0;
  long executions = 0, failures = 0;  // warm-up included in executions
};

// Runs `one` from `callers` threads for `seconds`; counts executions whose output is right.
Row measure(const std::string& method, const std::string& lang, int callers, double seconds,
            const std::function<bool()>& one) {
  for (int i = 0; i < 3; ++i) one();  // warm up
  const double k0 = kernel_threads_cpu_ms();
  std::atomic<long> done{0}, failed{0};
  std::atomic<bool> stop{false};
  auto t0 = Clock::now();
  std::vector<std::thread> threads;
  for (int c = 0; c < callers; ++c)
    threads.emplace_back([&] {
      while (!stop) (one() ? done : failed)++;
    });
  std::this_thread::sleep_for(std::chrono::duration<double>(seconds));
  stop = true;
  for (auto& t : threads) t.join();
  double secs = std::chrono::duration<double>(Clock::now() - t0).count();
  // The kernel's deferred teardown of the last executions' namespaces.
  std::this_thread::sleep_for(std::chrono::milliseconds(200));
  Row r{method, lang, callers, done / secs, 0, 0, done + failed + 3, failed};
  r.kthread_ms_per_exec = (kernel_threads_cpu_ms() - k0) / static_cast<double>(done + failed);
  return r;
}

// p50 latency of `one` (ms), with a pause between executions.
double latency_p50(int n, std::chrono::milliseconds pause, const std::function<bool()>& one) {
  std::vector<double> ms;
  for (int i = 0; i < n + 3; ++i) {
    auto t0 = Clock::now();
    bool ok = one();
    double took = std::chrono::duration<double, std::milli>(Clock::now() - t0).count();
    if (i >= 3 && ok) ms.push_back(took);  // the first ones warm up
    std::this_thread::sleep_for(pause);
  }
  if (ms.empty()) return 0;
  std::sort(ms.begin(), ms.end());
  return ms[ms.size() / 2];
}

// ---- HumanEval: the sandbox service against plain python3, both warm ----

// The HumanEval loader of a plain, warm python3: started ahead, it blocks on
// its stdin until the program arrives, then runs it as __main__.
const char* kWarmLoader =
    "import sys\n_src = sys.stdin.read()\nexec(compile(_src, 'main.py', 'exec'), {'__name__': '__main__'})\n";

struct WarmPython {
  pid_t pid = -1;
  int stdin_fd = -1;
};

WarmPython start_warm_python() {
  int in[2];
  WarmPython w;
  if (pipe2(in, O_CLOEXEC) != 0) return w;
  w.pid = fork();
  if (w.pid == 0) {
    dup2(in[0], 0);
    int devnull = open("/dev/null", O_WRONLY);
    dup2(devnull, 1);
    dup2(devnull, 2);
    execl("/usr/bin/python3", "python3", "-E", "-s", "-c", kWarmLoader, static_cast<char*>(nullptr));
    _exit(127);
  }
  close(in[0]);
  w.stdin_fd = in[1];
  return w;
}

// Feeds `program` to a started interpreter; true when it exits 0.
bool finish_warm_python(WarmPython w, const std::string& program) {
  if (w.pid < 0) return false;
  for (size_t at = 0; at < program.size();) {
    ssize_t n = write(w.stdin_fd, program.data() + at, program.size() - at);
    if (n <= 0) break;
    at += static_cast<size_t>(n);
  }
  close(w.stdin_fd);
  int status = 0;
  waitpid(w.pid, &status, 0);
  return WIFEXITED(status) && WEXITSTATUS(status) == 0;
}

// The floor made warm as RLWB's executors are (they start python3 in the
// next sandbox before the program arrives): each caller thread keeps one
// plain python3 started ahead. Without it the python3 rows would hold a
// warm RLWB against a cold floor.
struct WarmPythonSlot {
  WarmPython ready = start_warm_python();
  WarmPythonSlot() = default;
  WarmPythonSlot(const WarmPythonSlot&) = delete;
  WarmPythonSlot& operator=(const WarmPythonSlot&) = delete;
  ~WarmPythonSlot() { finish_warm_python(ready, ""); }
  bool run(const std::string& program) {
    const bool ok = finish_warm_python(ready, program);
    // The next one starts now, while the caller is elsewhere: as a server
    // that pre-forks after each request, and as RLWB's executor prepares
    // its next sandbox.
    ready = start_warm_python();
    return ok;
  }
};

bool run_on_warm_python(const std::string& program) {
  thread_local WarmPythonSlot slot;
  return slot.run(program);
}

struct PassResult {
  double per_s = 0;
  long failed = 0;
};

// Every program once, `workers` threads each with its next interpreter started.
PassResult plain_python_pass(const std::vector<std::string>& programs, int workers) {
  std::atomic<size_t> next{0};
  std::atomic<long> failed{0};
  auto t0 = Clock::now();
  std::vector<std::thread> threads;
  for (int w = 0; w < workers; ++w)
    threads.emplace_back([&] {
      WarmPython ready = start_warm_python();
      for (size_t i = next++; i < programs.size(); i = next++) {
        WarmPython current = ready;
        ready = start_warm_python();  // starts while this one runs
        if (!finish_warm_python(current, programs[i])) ++failed;
      }
      finish_warm_python(ready, "");
    });
  for (auto& t : threads) t.join();
  return {static_cast<double>(programs.size()) / std::chrono::duration<double>(Clock::now() - t0).count(),
          failed.load()};
}

PassResult sandbox_service_pass(SandboxClient& client, const std::vector<JudgeRequest>& requests) {
  auto t0 = Clock::now();
  std::vector<JudgeResult> results = client.judge_all(requests);
  PassResult r{
      static_cast<double>(requests.size()) / std::chrono::duration<double>(Clock::now() - t0).count(), 0};
  for (const auto& res : results)
    if (res.outcome != Outcome::ok) ++r.failed;
  return r;
}

// The table's rows: RLWB against bubblewrap and against the floor in the
// same warmth (python3: the pre-started floor; C has no interpreter to warm).
void record_sandbox_rows(const std::vector<Row>& rows) {
  auto find = [&](const std::string& method, const std::string& lang, int callers) -> const Row* {
    for (const Row& r : rows)
      if (r.method == method && r.lang == lang && r.callers == callers) return &r;
    return nullptr;
  };
  for (const Row& r : rows) {
    if (r.method != "rlwb sandbox") continue;
    const std::string what = r.lang + " hello, " + std::to_string(r.callers) + " caller(s)";
    const std::string key = "sandbox/" + r.lang + "_" + std::to_string(r.callers) + "_callers";
    if (const Row* b = find("bubblewrap", r.lang, r.callers))
      rlwb::bench::record_figure({.key = key + "_vs_bwrap",
                                  .title = "sandbox, " + what + ", full isolation (`bench_sandbox`)",
                                  .value = r.per_s,
                                  .unit = "execs/s",
                                  .peer = "bubblewrap --unshare-all, same seccomp filter",
                                  .peer_value = b->per_s,
                                  .pair_ratios = {r.per_s / b->per_s},
                                  .goal = "faster than bubblewrap",
                                  .met = r.per_s > b->per_s});
    const bool py = r.lang == "python3";
    if (const Row* f = find(py ? "python3 pre-started" : "fork+exec (floor)", r.lang, r.callers))
      rlwb::bench::record_figure(
          {.key = key + "_vs_floor",
           .title = "sandbox, " + what + ", against no isolation (`bench_sandbox`)",
           .value = r.per_s,
           .unit = "execs/s",
           .peer = py ? "plain python3, pre-started (warm floor)" : "plain fork+exec",
           .peer_value = f->per_s,
           .pair_ratios = {r.per_s / f->per_s},
           .goal = py ? "" : "within 1.5x of the floor",
           .met = py ? std::optional<bool>() : std::optional<bool>(f->per_s / r.per_s <= 1.5)});
  }
}

int humaneval_table(int pairs, int copies) {
  const auto problems = rlwb::core::data::read_humaneval_file(rlwb::core::data::locate_humaneval_file(""));
  std::vector<std::string> programs;
  std::vector<JudgeRequest> requests;
  for (int c = 0; c < copies; ++c)
    for (const auto& p : problems) {
      programs.push_back(rlwb::core::data::humaneval_program(p, p.canonical_solution));
      JudgeRequest req;
      req.language = Language::python3;
      req.program = p.prompt + p.canonical_solution;
      req.tests = {TestCase::assertion(rlwb::core::data::humaneval_check_code(p))};
      req.options.scoring = Scoring::all_or_nothing;
      requests.push_back(std::move(req));
    }
  const int workers = default_executor_count();
  const std::string endpoint = "ipc:///tmp/rlwb-bench-sandbox-" + std::to_string(getpid()) + ".sock";
  const std::vector<std::string> argv = service_argv(find_sandbox_binary(), endpoint, workers);
  std::vector<char*> args;
  for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  const pid_t service = fork();
  if (service == 0) {
    execv(args[0], args.data());
    _exit(127);
  }
  int code = 0;
  try {
    wait_for_service(endpoint, std::chrono::seconds(30));
    SandboxClient client(endpoint);
    std::printf("\nHumanEval: %zu canonical solutions x %d = %zu programs per pass, on CPUs %s (%s)\n",
                problems.size(), copies, programs.size(), rlwb::bench::allowed_cores().c_str(),
                rlwb::bench::cpu_model().c_str());
    std::printf("rlwb-sandbox service with %d executors vs plain python3, %d worker threads; both warm\n",
                workers, workers);
    plain_python_pass(programs, workers);  // untimed: the page cache, the executors' first sandboxes
    sandbox_service_pass(client, requests);
    std::printf("%-5s %-13s %16s %16s %9s %8s\n", "pair", "first", "sandbox execs/s", "python3 execs/s",
                "ratio", "failed");
    std::vector<double> ratios, box_rates, plain_rates;
    for (int k = 0; k < pairs; ++k) {
      PassResult box, plain;
      if (k % 2 == 0) {
        box = sandbox_service_pass(client, requests);
        plain = plain_python_pass(programs, workers);
      } else {
        plain = plain_python_pass(programs, workers);
        box = sandbox_service_pass(client, requests);
      }
      ratios.push_back(box.per_s / plain.per_s);
      box_rates.push_back(box.per_s);
      plain_rates.push_back(plain.per_s);
      std::printf("%-5d %-13s %16.1f %16.1f %8.2fx %4ld/%-4ld\n", k + 1, k % 2 == 0 ? "sandbox" : "python3",
                  box.per_s, plain.per_s, ratios.back(), box.failed, plain.failed);
      if (box.failed || plain.failed) code = 1;
    }
    std::vector<double> sorted = ratios;
    std::sort(sorted.begin(), sorted.end());
    const double median = sorted[sorted.size() / 2];
    std::printf(
        "ratio (sandbox / python3 execs/s): median %.2fx, min %.2fx, max %.2fx, spread %.1f%% of the "
        "median\n",
        median, sorted.front(), sorted.back(), 100 * (sorted.back() - sorted.front()) / median);
    rlwb::bench::record_figure({.key = "sandbox/humaneval",
                                .title = "HumanEval, " + std::to_string(programs.size()) +
                                         " canonical programs through the sandbox service, both warm "
                                         "(`bench_sandbox --only humaneval`)",
                                .value = rlwb::bench::median_of(box_rates),
                                .unit = "execs/s",
                                .peer = "plain python3 subprocesses, pre-started, no isolation",
                                .peer_value = rlwb::bench::median_of(plain_rates),
                                .pair_ratios = ratios,
                                .higher_is_better = true,
                                .goal = "",
                                .met = std::nullopt});
  } catch (const std::exception& e) {
    std::fprintf(stderr, "bench_sandbox: HumanEval: %s\n", e.what());
    code = 1;
  }
  kill(service, SIGTERM);
  waitpid(service, nullptr, 0);
  return code;
}

}  // namespace

int main(int argc, char** argv) {
  double seconds = 2;
  int pairs = 3;
  std::string only;
  CLI::App app{
      "bench_sandbox: executions/s and latency of RLWB's sandbox next to plain "
      "fork+exec (the floor) and bubblewrap",
      "bench_sandbox"};
  app.add_option("--seconds", seconds, "seconds per row")->check(CLI::PositiveNumber)->capture_default_str();
  app.add_option("--only", only, "one program kind alone (default: both)")
      ->check(CLI::IsMember({"python3", "C", "humaneval"}));
  app.add_option("--pairs", pairs, "HumanEval: interleaved pairs of passes")
      ->check(CLI::PositiveNumber)
      ->capture_default_str();
  if (auto exit_code = rlwb::core::parse_command_line(app, argc, argv)) return *exit_code;
  auto wanted = [&](const char* lang) { return only.empty() || only == lang; };
  const int cpus = default_executor_count();
  if (only == "humaneval") return humaneval_table(pairs, 8);

  // A host directory with the programs for the floor and bwrap, and the seccomp filter for bwrap.
  std::string dir = "/tmp/rlwb-bench-sandbox-" + std::to_string(getpid());
  std::filesystem::create_directories(dir);
  std::ofstream(dir + "/main.py") << kPython;
  std::string binary;
  std::vector<Row> rows;
  bool have_bwrap = access("/usr/bin/bwrap", X_OK) == 0;
  {
    PoolOptions o;
    o.executors = 1;
    LocalSandbox box(o);
    Verdict v = box.compile(Language::c, kC, binary);
    if (!v.ok()) {
      std::fprintf(stderr, "bench_sandbox: compiling the C program failed: %s\n", v.detail.c_str());
      return 1;
    }
    const std::string k =
        box.pool().kernel_support().fallbacks.empty() ? "" : box.pool().kernel_support().fallbacks[0];
    std::printf("isolation fallback on this kernel: %s\n\n", k.c_str());
  }
  {
    std::ofstream b(dir + "/main", std::ios::binary);
    b << binary;
  }
  std::filesystem::permissions(dir + "/main", std::filesystem::perms::owner_all |
                                                  std::filesystem::perms::group_exec |
                                                  std::filesystem::perms::others_exec);
  {
    SeccompProgram prog = build_seccomp_program();
    std::ofstream f(dir + "/seccomp.bpf", std::ios::binary);
    f.write(reinterpret_cast<const char*>(prog.filter.data()),
            static_cast<std::streamsize>(prog.filter.size() * sizeof(sock_filter)));
  }

  const std::vector<std::string> py_floor = {"/usr/bin/python3", "-E", "-s", dir + "/main.py"};
  const std::vector<std::string> c_floor = {dir + "/main"};
  auto bwrap = [&](const std::string& file, std::vector<std::string> cmd) {
    std::vector<std::string> a = {"/usr/bin/bwrap",
                                  "--unshare-all",
                                  "--die-with-parent",
                                  "--new-session",
                                  "--ro-bind",
                                  "/usr",
                                  "/usr",
                                  "--symlink",
                                  "usr/bin",
                                  "/bin",
                                  "--symlink",
                                  "usr/lib",
                                  "/lib",
                                  "--symlink",
                                  "usr/lib64",
                                  "/lib64",
                                  "--symlink",
                                  "usr/sbin",
                                  "/sbin",
                                  "--ro-bind",
                                  "/etc/ld.so.cache",
                                  "/etc/ld.so.cache",
                                  "--proc",
                                  "/proc",
                                  "--dev",
                                  "/dev",
                                  "--tmpfs",
                                  "/tmp",
                                  "--ro-bind",
                                  dir + "/" + file,
                                  "/tmp/" + file,
                                  "--chdir",
                                  "/tmp",
                                  "--seccomp",
                                  "10",
                                  "--"};
    a.insert(a.end(), cmd.begin(), cmd.end());
    return a;
  };
  const auto py_bwrap = bwrap("main.py", {"/usr/bin/python3", "-E", "-s", "/tmp/main.py"});
  const auto c_bwrap = bwrap("main", {"/tmp/main"});
  const std::string bpf = dir + "/seccomp.bpf";

  for (const char* lang : {"python3", "C"}) {
    if (!wanted(lang)) continue;
    const bool py = std::strcmp(lang, "python3") == 0;
    for (int callers : {1, cpus}) {
      double c0 = all_cpu_ms();
      Row floor = measure("fork+exec (floor)", lang, callers, seconds,
                          [&] { return spawn(py ? py_floor : c_floor) == "hi\n"; });
      floor.cpu_ms_per_exec = (all_cpu_ms() - c0) / floor.executions;
      rows.push_back(floor);
      if (py) {
        c0 = all_cpu_ms();
        Row warm = measure("python3 pre-started", lang, callers, seconds,
                           [&] { return run_on_warm_python(kPython); });
        warm.cpu_ms_per_exec = (all_cpu_ms() - c0) / warm.executions;
        rows.push_back(warm);
      }
      if (have_bwrap) {
        c0 = all_cpu_ms();
        Row b = measure("bubblewrap", lang, callers, seconds,
                        [&] { return spawn(py ? py_bwrap : c_bwrap, 10, bpf) == "hi\n"; });
        b.cpu_ms_per_exec = (all_cpu_ms() - c0) / b.executions;
        rows.push_back(b);
      }
      c0 = all_cpu_ms();
      Row r;
      {
        PoolOptions o;
        o.executors = callers + 2;  // prepared sandboxes are ready while others are being made
        LocalSandbox box(o);
        RunRequest req;
        req.program = kPython;
        r = measure("rlwb sandbox", lang, callers, seconds, [&] {
          Verdict v = py ? box.run(req) : box.run_binary(binary, "");
          return v.ok() && v.stdout_data == "hi\n";
        });
      }  // executors reaped: their CPU (and their sandboxes') is now counted
      r.cpu_ms_per_exec = (all_cpu_ms() - c0) / r.executions;
      rows.push_back(r);
    }
  }

  std::printf("%-20s %-8s %7s %12s %10s %14s %16s %8s\n", "method", "program", "callers", "execs/s",
              "vs floor", "CPU ms/exec", "kthread ms/exec", "failed");
  for (const Row& r : rows) {
    double floor = 0;
    for (const Row& f : rows)
      if (f.method == "fork+exec (floor)" && f.lang == r.lang && f.callers == r.callers) floor = f.per_s;
    std::printf("%-20s %-8s %7d %12.1f %9.2fx %14.2f %16.2f %8ld\n", r.method.c_str(), r.lang.c_str(),
                r.callers, r.per_s, floor > 0 ? floor / r.per_s : 0.0, r.cpu_ms_per_exec,
                r.kthread_ms_per_exec, r.failures);
  }
  std::printf(
      "\n'vs floor' is floor execs/s divided by the method's (1.00x = as fast as no isolation).\n"
      "'python3 pre-started' is the floor warm as RLWB is: each caller's next interpreter is started\n"
      "before its program arrives (no isolation); RLWB's executors do the same inside the sandbox.\n");
  record_sandbox_rows(rows);

  std::printf("\nlatency of one execution, p50, with a pause between executions:\n");
  std::printf("%-20s %-8s %12s %10s\n", "method", "program", "p50 ms", "vs floor");
  for (const char* lang : {"python3", "C"}) {
    if (!wanted(lang)) continue;
    const bool py = std::strcmp(lang, "python3") == 0;
    const int n = py ? 40 : 150;
    const auto pause = std::chrono::milliseconds(py ? 60 : 15);
    double floor = latency_p50(n, pause, [&] { return spawn(py ? py_floor : c_floor) == "hi\n"; });
    double bw = have_bwrap
                    ? latency_p50(n, pause, [&] { return spawn(py ? py_bwrap : c_bwrap, 10, bpf) == "hi\n"; })
                    : 0;
    PoolOptions o;
    o.executors = 2;
    LocalSandbox box(o);
    RunRequest req;
    req.program = kPython;
    double rl = latency_p50(n, pause, [&] {
      Verdict v = py ? box.run(req) : box.run_binary(binary, "");
      return v.ok() && v.stdout_data == "hi\n";
    });
    double warm = py ? latency_p50(n, pause, [&] { return run_on_warm_python(kPython); }) : 0;
    std::printf("%-20s %-8s %12.2f %9.2fx\n", "fork+exec (floor)", lang, floor, 1.0);
    if (py) std::printf("%-20s %-8s %12.2f %9.2fx\n", "python3 pre-started", lang, warm, warm / floor);
    if (have_bwrap) std::printf("%-20s %-8s %12.2f %9.2fx\n", "bubblewrap", lang, bw, bw / floor);
    std::printf("%-20s %-8s %12.2f %9.2fx\n", "rlwb sandbox", lang, rl, rl / floor);
  }
  std::filesystem::remove_all(dir);
  return only.empty() ? humaneval_table(pairs, 8) : 0;
}
