// Benchmark: RPC round trip controller -> 1 and -> 8 workers with an empty
// Batch, p50/p99 in microseconds, side by side with its floor: a raw
// ZeroMQ ROUTER/DEALER ping-pong over the same transport (ipc://) with
// echo processes. Optional peer: bench/ray_rpc.py (Ray actor calls), run
// when the Python venv has ray.
//
// RLWB is measured twice: calling a real method of a worker role -- the
// demo role's `sleep` with {ms: 0}, which returns its empty input through
// the whole dispatch (args, context, the role's method table, the
// method's compute_s) -- as Ray calls a real actor method; and calling the
// built-in __ping__, which the worker answers before any of that. The
// real method is the comparison with Ray.
//   bench_rpc [--iters N] [--workers N] [--only rlwb|raw]   (--only: one side alone, for profiling)
#include "bench/bench_record.h"
#include "core/common/command_line.h"
#include "core/launch/local_launcher.h"
#include "core/rpc/rpc_server.h"

#include <sys/wait.h>
#include <unistd.h>

#include <nlohmann/json.hpp>

#include <algorithm>
#include <array>
#include <cstdio>
#include <filesystem>
#include <string>
#include <vector>

using namespace rlwb::core;
using Clock = std::chrono::steady_clock;

namespace {

struct Stats {
  double p50, p99;
};

Stats percentiles(std::vector<double> us) {
  std::sort(us.begin(), us.end());
  if (std::getenv("RLWB_BENCH_TAIL")) {
    double sum = 0;
    for (double u : us) sum += u;
    std::fprintf(stderr, "  mean %.1f us, p99.9 %.1f us, max %.1f us, > 5 ms: %zu\n", sum / us.size(),
                 us[us.size() * 999 / 1000], us.back(),
                 static_cast<size_t>(us.end() - std::upper_bound(us.begin(), us.end(), 5000.0)));
  }
  return {us[us.size() / 2], us[std::min(us.size() - 1, us.size() * 99 / 100)]};
}

double micros_since(Clock::time_point t) {
  return std::chrono::duration<double, std::micro>(Clock::now() - t).count();
}

// Raw ZeroMQ: `peers` forked echo processes, each a DEALER.
Stats raw_zmq(int peers, int iters) {
  std::string path = "/tmp/rlwb-bench-raw-" + std::to_string(getpid()) + ".sock";
  std::vector<pid_t> children;
  for (int i = 0; i < peers; ++i) {
    pid_t pid = fork();
    if (pid == 0) {
      zmq::context_t ctx(1);
      zmq::socket_t dealer(ctx, zmq::socket_type::dealer);
      std::string id = "peer" + std::to_string(i);
      dealer.set(zmq::sockopt::routing_id, id);
      dealer.set(zmq::sockopt::rcvtimeo, 10000);
      dealer.connect("ipc://" + path);
      dealer.send(zmq::str_buffer("hello"), zmq::send_flags::none);
      while (true) {
        zmq::message_t m;
        if (!dealer.recv(m)) _exit(0);
        if (m.to_string_view() == "bye") _exit(0);
        dealer.send(m, zmq::send_flags::none);
      }
    }
    children.push_back(pid);
  }
  zmq::context_t ctx(1);
  zmq::socket_t router(ctx, zmq::socket_type::router);
  router.bind("ipc://" + path);
  std::vector<std::string> ids;
  for (int i = 0; i < peers; ++i) {
    zmq::message_t id, hello;
    (void)router.recv(id);
    (void)router.recv(hello);
    ids.push_back(id.to_string());
  }
  std::vector<double> samples;
  std::string payload = R"({"kind":"call","id":1,"method":"__ping__","columns":[],"objects":{},"meta":{}})";
  for (int it = 0; it < iters + 100; ++it) {
    auto t = Clock::now();
    for (auto& id : ids) {
      router.send(zmq::buffer(id), zmq::send_flags::sndmore);
      router.send(zmq::buffer(payload), zmq::send_flags::none);
    }
    for (int i = 0; i < peers; ++i) {
      zmq::message_t id, body;
      (void)router.recv(id);
      (void)router.recv(body);
    }
    if (it >= 100) samples.push_back(micros_since(t));
  }
  for (auto& id : ids) {
    router.send(zmq::buffer(id), zmq::send_flags::sndmore);
    router.send(zmq::str_buffer("bye"), zmq::send_flags::none);
  }
  for (pid_t c : children) waitpid(c, nullptr, 0);
  std::filesystem::remove(path);
  return percentiles(samples);
}

// RLWB: the real RpcServer and rlwb-worker processes; `real_method`: a
// role's method (demo.sleep {ms: 0}), else the built-in __ping__.
Stats rlwb_rpc(int workers, int iters, bool real_method) {
  std::string path = "/tmp/rlwb-bench-rpc-" + std::to_string(getpid()) + ".sock";
  RpcServer rpc("ipc://" + path);
  LocalLauncher launcher(std::filesystem::temp_directory_path() / "rlwb-bench-logs");
  std::vector<std::string> ids;
  for (int r = 0; r < workers; ++r) {
    ProcessSpec spec{worker_id("bench", r),
                     {RLWB_WORKER_BIN, "--controller", rpc.address(), "--group", "bench", "--rank",
                      std::to_string(r), "--world", std::to_string(workers)}};
    launcher.start(spec);
    ids.push_back(spec.name);
  }
  rpc.wait_for_workers(ids, std::chrono::seconds(60));
  std::vector<ReplyFuture> replies(workers);
  const nlohmann::json no_wait = {{"ms", 0}};
  if (real_method) {
    for (int r = 0; r < workers; ++r)
      replies[r] =
          rpc.call(ids[r], "bench", kInitModelMethod, Batch{},
                   {{"role", "demo"}, {"config", nlohmann::json::object()}, {"mesh", {{"dp", workers}}}});
    for (auto& f : replies) f.get();
  }
  std::vector<double> samples;
  for (int it = 0; it < iters + 100; ++it) {
    auto t = Clock::now();
    for (int r = 0; r < workers; ++r)
      replies[r] = real_method ? rpc.call(ids[r], "bench", "sleep", Batch{}, no_wait)
                               : rpc.call(ids[r], "", kPingMethod, Batch{});
    for (auto& f : replies) f.get();
    if (it >= 100) samples.push_back(micros_since(t));
  }
  rpc.shutdown_workers();
  launcher.stop_all();
  std::filesystem::remove(path);
  return percentiles(samples);
}

// Ray actors as the peer, when the venv has ray; nullopt otherwise.
std::optional<nlohmann::json> ray_peer(int iters) {
  const char* home = std::getenv("HOME");
  std::string python = std::getenv("RLWB_PYTHON")
                           ? std::getenv("RLWB_PYTHON")
                           : std::string(home ? home : "/root") + "/.local/share/rlwb/venv/bin/python";
  std::string script = std::string(RLWB_SOURCE_DIR) + "/bench/ray_rpc.py";
  std::string cmd = "timeout 600 " + python + " " + script + " " + std::to_string(iters) + " 2>/dev/null";
  FILE* pipe = popen(cmd.c_str(), "r");
  if (!pipe) return std::nullopt;
  std::string out;
  std::array<char, 4096> buf;
  while (fgets(buf.data(), buf.size(), pipe)) out += buf.data();
  // Ray's shutdown may exit non-zero after printing its figures, and the
  // figures nest objects: take the last line that parses, whatever the status.
  pclose(pipe);
  while (!out.empty() && out.back() == '\n') out.pop_back();
  size_t line_start = out.rfind('\n');
  try {
    auto json = nlohmann::json::parse(out.substr(line_start == std::string::npos ? 0 : line_start + 1));
    if (json.is_object()) return json;
  } catch (...) {
  }
  return std::nullopt;
}

}  // namespace

int main(int argc, char** argv) {
  int iters = 2000;
  std::vector<int> worker_counts = {1, 8};
  bool with_raw = true, with_rlwb = true;
  CLI::App app{
      "bench_rpc: RPC round trip of RLWB's RpcServer + rlwb-worker next to raw ZeroMQ "
      "ping-pong (the floor) and Ray",
      "bench_rpc"};
  app.add_option("--iters", iters, "round trips per row")->check(CLI::PositiveNumber)->capture_default_str();
  int workers = 0;
  app.add_option("--workers", workers, "one row with this many workers (default: rows of 1 and 8)")
      ->check(CLI::PositiveNumber);
  std::string only;
  app.add_option("--only", only, "one side alone, for profiling")->check(CLI::IsMember({"rlwb", "raw"}));
  if (auto exit_code = rlwb::core::parse_command_line(app, argc, argv)) return *exit_code;
  if (workers > 0) worker_counts = {workers};
  if (!only.empty()) {
    with_raw = only == "raw";
    with_rlwb = only == "rlwb";
  }
  std::printf("RPC round trip, empty Batch, ipc://, %d iterations (after 100 warm-up), %u cores\n", iters,
              std::thread::hardware_concurrency());
  std::printf("%-8s %-28s %10s %10s %14s\n", "workers", "path", "p50 us", "p99 us", "p50 / raw zmq");
  auto ray = with_raw ? ray_peer(iters) : std::nullopt;
  for (int workers : worker_counts) {
    Stats raw = with_raw ? raw_zmq(workers, iters) : Stats{1, 1};
    Stats ping = with_rlwb ? rlwb_rpc(workers, iters, false) : Stats{1, 1};
    Stats ours = with_rlwb ? rlwb_rpc(workers, iters, true) : Stats{1, 1};
    std::printf("%-8d %-28s %10.1f %10.1f %14s\n", workers, "raw ZeroMQ ping-pong (floor)", raw.p50, raw.p99,
                "1.00");
    std::printf("%-8d %-28s %10.1f %10.1f %14.2f\n", workers, "RLWB __ping__ (no dispatch)", ping.p50,
                ping.p99, ping.p50 / raw.p50);
    std::printf("%-8d %-28s %10.1f %10.1f %14.2f\n", workers, "RLWB role method demo.sleep", ours.p50,
                ours.p99, ours.p50 / raw.p50);
    const std::string w = std::to_string(workers);
    if (with_raw && with_rlwb)
      rlwb::bench::record_figure(
          {.key = "rpc/" + w + "_workers_vs_raw",
           .title = "RPC round trip p50 through a role method, " + w + " worker(s) (`bench_rpc`)",
           .value = ours.p50,
           .unit = "us",
           .peer = "raw ZeroMQ ping-pong",
           .peer_value = raw.p50,
           .pair_ratios = {ours.p50 / raw.p50},
           .higher_is_better = false,
           .goal = "within 1.5x of raw",
           .met = ours.p50 / raw.p50 <= 1.5});
    if (ray) {
      auto r = (*ray)[std::to_string(workers)];
      double p50 = r["p50_us"].get<double>(), p99 = r["p99_us"].get<double>();
      if (with_rlwb)
        rlwb::bench::record_figure({.key = "rpc/" + w + "_workers_vs_ray",
                                    .title = "RPC round trip p50, " + w + " worker(s), vs Ray (`bench_rpc`)",
                                    .value = ours.p50,
                                    .unit = "us",
                                    .peer = "Ray actor method",
                                    .peer_value = p50,
                                    .pair_ratios = {p50 / ours.p50},
                                    .goal = "faster than Ray",
                                    .met = p50 > ours.p50});
      std::printf("%-8d %-28s %10.1f %10.1f %14.2f   (RLWB is %.1fx faster at p50)\n", workers,
                  "Ray actor call (peer)", p50, p99, p50 / raw.p50, p50 / ours.p50);
    } else if (workers == 1) {
      std::printf(
          "%-8s Ray peer skipped: 'import ray' failed in the RLWB venv (pip install ray to compare)\n", "");
    }
  }
  return 0;
}
