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
//   bench_sandbox [--seconds S] [--only python3|C]   (default 2 s per row, both)
#include <fcntl.h>
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
#include <string>
#include <thread>
#include <vector>

#include "core/common/command_line.h"
#include "sandbox/sandbox.h"
#include "sandbox/seccomp_policy.h"

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

}  // namespace

int main(int argc, char** argv) {
  double seconds = 2;
  std::string only;
  CLI::App app{
      "bench_sandbox: executions/s and latency of RLWB's sandbox next to plain "
      "fork+exec (the floor) and bubblewrap",
      "bench_sandbox"};
  app.add_option("--seconds", seconds, "seconds per row")->check(CLI::PositiveNumber)->capture_default_str();
  app.add_option("--only", only, "one program kind alone (default: both)")
      ->check(CLI::IsMember({"python3", "C"}));
  if (auto exit_code = rlwb::core::parse_command_line(app, argc, argv)) return *exit_code;
  auto wanted = [&](const char* lang) { return only.empty() || only == lang; };
  const int cpus = default_executor_count();

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
  std::printf("\n'vs floor' is floor execs/s divided by the method's (1.00x = as fast as no isolation).\n");

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
    std::printf("%-20s %-8s %12.2f %9.2fx\n", "fork+exec (floor)", lang, floor, 1.0);
    if (have_bwrap) std::printf("%-20s %-8s %12.2f %9.2fx\n", "bubblewrap", lang, bw, bw / floor);
    std::printf("%-20s %-8s %12.2f %9.2fx\n", "rlwb sandbox", lang, rl, rl / floor);
  }
  std::filesystem::remove_all(dir);
  return 0;
}
