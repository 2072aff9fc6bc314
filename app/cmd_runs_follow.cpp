// rlwb runs follow RUN | --pid PID: one run's rows as JSON lines on stdout
// (core/tracking/run_stream.h), until the run ends. `rlwb run --remote` runs
// it on the remote host over SSH and mirrors what it prints.
#include <signal.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <memory>
#include <nlohmann/json.hpp>
#include <thread>

#include "app/commands.h"
#include "core/common/version.h"
#include "core/tracking/run_stream.h"
#include "core/tracking/tracking.h"

namespace rlwb::app {
namespace {

// Exit codes besides 0 (the run ended and everything was sent) that tell
// the mirror not to try again: the request itself cannot be met.
constexpr int kNoSuchRun = 2;
constexpr int kNeverStarted = 3;

struct FollowArgs {
  std::string db = kDefaultTrackingDb;
  int64_t run = 0;
  int64_t pid = 0;
  std::string since;
  std::string log;
  int poll_ms = 200;
  double alive_every_s = 2;
  double wait_start_s = 60;
};

bool process_alive(int64_t pid) { return kill(static_cast<pid_t>(pid), 0) == 0 || errno == EPERM; }

std::string tail_of(const std::string& path, size_t bytes = 2000) {
  std::ifstream in(path, std::ios::binary);
  std::string text((std::istreambuf_iterator<char>(in)), {});
  return text.size() > bytes ? text.substr(text.size() - bytes) : text;
}

// The run the controller with pid `pid` records, waiting for it to start;
// 0 (said on stderr) when it does not.
int64_t run_of_controller(const FollowArgs& args) {
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::duration<double>(args.wait_start_s);
  auto last_word = std::chrono::steady_clock::now();
  while (true) {
    // A controller can take a while to start (a loaded host): the reader
    // must not take the silence for a dead link.
    if (std::chrono::steady_clock::now() - last_word > std::chrono::duration<double>(args.alive_every_s)) {
      std::cout << R"({"kind":"alive"})" << std::endl;
      last_word = std::chrono::steady_clock::now();
    }
    if (std::filesystem::exists(args.db)) {
      try {
        for (const auto& run : core::TrackingReader(args.db).list_runs())
          if (run.pid == args.pid) return run.id;
      } catch (const core::TrackingError&) {  // being made: try again
      }
    }
    if (!process_alive(args.pid)) {
      std::cerr << "rlwb runs follow: the controller (pid " << args.pid << ") exited before its run started";
      if (!args.log.empty())
        std::cerr << "; the end of its output (" << args.log << "):\n" << tail_of(args.log);
      std::cerr << "\n";
      return 0;
    }
    if (std::chrono::steady_clock::now() > deadline) {
      std::cerr << "rlwb runs follow: controller pid " << args.pid << " started no run in " << args.db
                << " within " << args.wait_start_s << " s\n";
      return 0;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
}

int follow(const FollowArgs& args) {
  if ((args.run == 0) == (args.pid == 0))
    throw core::UsageError("name the run to follow: RUN, or --pid PID of its controller");
  const int64_t run = args.run ? args.run : run_of_controller(args);
  if (run == 0) return kNeverStarted;
  if (!std::filesystem::exists(args.db) || !core::TrackingReader(args.db).run(run)) {
    std::cerr << "rlwb runs follow: no run " << run << " in " << args.db << " (see 'rlwb runs list --db "
              << args.db << "')\n";
    return kNoSuchRun;
  }
  core::RunStream stream(args.db, run, core::StreamCursor::parse(args.since));
  const auto info = core::TrackingReader(args.db).run(run);
  std::cout << nlohmann::json{{"kind", "hello"},
                              {"run", run},
                              {"db", std::filesystem::absolute(args.db).lexically_normal().string()},
                              {"pid", info->pid},
                              {"version", core::version()}}
                   .dump()
            << std::endl;
  auto last_word = std::chrono::steady_clock::now();
  auto last_stale_check = last_word - std::chrono::hours(1);
  while (std::cout) {
    // This host can tell whether the controller still lives; a dead one's
    // run is closed as failed here, and the stream then carries its end.
    if (std::chrono::steady_clock::now() - last_stale_check > std::chrono::seconds(2)) {
      core::TrackingAdmin(args.db).mark_stale_runs();
      last_stale_check = std::chrono::steady_clock::now();
    }
    const std::vector<std::string> lines = stream.next_batch();
    for (const auto& line : lines) std::cout << line << "\n";
    const auto now = std::chrono::steady_clock::now();
    if (!lines.empty()) {
      last_word = now;
    } else if (now - last_word > std::chrono::duration<double>(args.alive_every_s)) {
      std::cout << R"({"kind":"alive"})"
                << "\n";
      last_word = now;
    }
    if (stream.ended()) {
      std::cout << nlohmann::json{{"kind", "end"}, {"status", stream.end_status()}}.dump() << std::endl;
      return 0;
    }
    std::cout.flush();
    if (lines.empty()) std::this_thread::sleep_for(std::chrono::milliseconds(args.poll_ms));
  }
  return 1;  // stdout closed: the reader went away
}

}  // namespace

core::Subcommand add_runs_follow_command(CLI::App& runs) {
  auto args = std::make_shared<FollowArgs>();
  CLI::App* command = runs.add_subcommand(
      "follow", "stream a run's rows as JSON lines until it ends (what 'rlwb run --remote' mirrors)");
  command->add_option("RUN", args->run, "run id")->check(CLI::PositiveNumber);
  command
      ->add_option("--pid", args->pid,
                   "follow the run of the controller with this pid (waits for it to start)")
      ->check(CLI::PositiveNumber);
  command->add_option("--since", args->since, "the cursor of the last batch received (its 'cursor' line)");
  command->add_option("--log", args->log,
                      "the controller's output file, shown if it exits before its run starts");
  command->add_option("--poll-ms", args->poll_ms, "how often to look for new rows")
      ->check(CLI::Range(10, 10000))
      ->capture_default_str();
  command
      ->add_option("--alive-every", args->alive_every_s, "seconds between 'alive' lines when nothing changes")
      ->check(CLI::Range(0.1, 60.0))
      ->capture_default_str();
  command->add_option("--wait-start", args->wait_start_s, "seconds --pid waits for the run to appear")
      ->check(CLI::Range(1.0, 3600.0))
      ->capture_default_str();
  add_db_option(*command, args->db);
  return {command, [args] { return follow(*args); }};
}

}  // namespace rlwb::app
