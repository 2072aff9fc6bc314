#include "core/launch/remote_follow.h"

#include <csignal>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <thread>
#include <utility>

#include "core/launch/line_process.h"
#include "core/tracking/run_stream.h"
#include "core/tracking/tracking.h"

namespace rlwb::core {
namespace {

using Clock = std::chrono::steady_clock;

// `rlwb runs follow` exits with these when trying again cannot help.
constexpr int kFollowNoSuchRun = 2;
constexpr int kFollowNeverStarted = 3;

std::string last_line_of(const std::string& text) {
  std::string trimmed = text;
  while (!trimmed.empty() && trimmed.back() == '\n') trimmed.pop_back();
  const auto newline = trimmed.rfind('\n');
  return newline == std::string::npos ? trimmed : trimmed.substr(newline + 1);
}

class Follower {
 public:
  Follower(const RemoteHost& remote, const RemoteFollowOptions& options)
      : remote_(remote), options_(options) {
    result_.remote_run = options.remote_run;
  }

  RemoteFollowResult run() {
    std::optional<Clock::time_point> link_lost;
    double backoff_s = 0.5;
    while (true) {
      const int code = follow_once();
      if (!result_.status.empty() || !result_.error.empty()) return result_;
      if (std::exchange(ask_again_now_, false)) continue;
      if (code == kFollowNoSuchRun || code == kFollowNeverStarted) {
        result_.error = "'rlwb runs follow' on " + remote_.host + " could not follow the run: " + why_;
        return result_;
      }
      if (got_a_batch_) {
        link_lost.reset();
        backoff_s = 0.5;
      }
      if (!link_lost) link_lost = Clock::now();
      const double lost_for = std::chrono::duration<double>(Clock::now() - *link_lost).count();
      if (lost_for > options_.reconnect_for_s) {
        result_.error = "lost the link to " + remote_.host + " for " +
                        std::to_string(static_cast<int>(lost_for)) + " s (" + why_ +
                        "); the run goes on there: follow it again with '" + follow_again_command() + "'";
        return result_;
      }
      ++result_.reconnects;
      note("[rlwb] the link to " + remote_.host + " dropped (" + why_ + "); following again from the last " +
           "mirrored batch");
      sleep_unless_stopped(backoff_s);
      backoff_s = std::min(backoff_s * 2, 5.0);
    }
  }

 private:
  void note(const std::string& text) const {
    if (options_.note) options_.note(text);
  }

  void sleep_unless_stopped(double seconds) {
    const auto until = Clock::now() + std::chrono::duration<double>(seconds);
    while (Clock::now() < until) {
      pass_on_stop();
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
  }

  // The first stop request goes to the remote controller once; the run
  // then ends there as interrupted and its end comes down the stream.
  void pass_on_stop() {
    if (stop_sent_ || !options_.stop.stop_requested() || controller_pid_ <= 0) return;
    stop_sent_ = true;
    std::string why;
    if (signal_remote(remote_, controller_pid_, SIGINT, &why))
      note("[rlwb] asked the run on " + remote_.host + " to stop (SIGINT to pid " +
           std::to_string(controller_pid_) + ")");
    else
      note("[rlwb] could not ask the run on " + remote_.host + " to stop: " + why);
  }

  // The `rlwb run` that picks this mirror up again, with the options that differ from the defaults.
  std::string follow_again_command() const {
    const RemoteHost defaults;
    std::string command = "rlwb run --remote " + remote_.host;
    if (remote_.dir != defaults.dir) command += " --remote-dir " + shell_quote(remote_.dir);
    if (remote_.rlwb != defaults.rlwb) command += " --remote-rlwb " + shell_quote(remote_.rlwb);
    if (!remote_.ssh_config.empty()) command += " --ssh-config " + shell_quote(remote_.ssh_config);
    return command + " --db " + shell_quote(options_.local_db) + " --follow " +
           std::to_string(result_.remote_run);
  }

  std::string follow_command() const {
    std::string command = in_remote_dir(remote_) + remote_path(remote_.rlwb) + " runs follow --db " +
                          shell_quote(options_.remote_db);
    if (result_.remote_run > 0)
      command += " " + std::to_string(result_.remote_run);
    else
      command += " --pid " + std::to_string(options_.remote_pid);
    if (!options_.remote_log.empty()) command += " --log " + shell_quote(options_.remote_log);
    if (mirror_) command += " --since " + shell_quote(mirror_->cursor().to_string());
    return command;
  }

  // One ssh connection, until it ends or falls silent; its exit code.
  int follow_once() {
    got_a_batch_ = false;
    LineProcess process(ssh_argv(remote_, follow_command()));
    auto last_line = Clock::now();
    while (true) {
      pass_on_stop();
      std::optional<std::string> line = process.next_line(std::chrono::milliseconds(250));
      if (!line) {
        if (process.ended()) break;
        if (std::chrono::duration<double>(Clock::now() - last_line).count() > options_.silence_s) {
          why_ = "no word for " + std::to_string(static_cast<int>(options_.silence_s)) + " s";
          process.finish();
          if (mirror_) mirror_->discard_partial_batch();
          return -1;
        }
        continue;
      }
      last_line = Clock::now();
      if (!take(*line)) return 0;
    }
    const int code = process.finish();
    if (mirror_) mirror_->discard_partial_batch();
    // The follower's own refusals say it all; for ssh's exits the last line.
    why_ = code == kFollowNoSuchRun || code == kFollowNeverStarted ? process.stderr_text()
                                                                   : last_line_of(process.stderr_text());
    if (why_.empty()) why_ = "ssh exited with code " + std::to_string(code);
    return code;
  }

  // False once following is over (the end, or an error in result_).
  bool take(const std::string& line) {
    nlohmann::json parsed = nlohmann::json::parse(line, nullptr, /*allow_exceptions=*/false);
    if (parsed.is_object() && parsed.value("kind", "") == "hello") {
      result_.remote_run = parsed.value("run", int64_t{0});
      controller_pid_ = parsed.value("pid", int64_t{0});
      if (!mirror_) {
        mirror_ = std::make_unique<RunMirror>(options_.local_db, remote_.host,
                                              parsed.value("db", std::string()), result_.remote_run);
        // A mirror that exists already continues from its cursor: the
        // first connection asked from the start, so ask again from there.
        if (mirror_->local_run() != 0 && mirror_->cursor().to_string() != StreamCursor{}.to_string()) {
          note("[rlwb] run " + std::to_string(result_.remote_run) + " of " + remote_.host +
               " is mirrored here already as run " + std::to_string(mirror_->local_run()) +
               "; continuing from its last batch");
          ask_again_now_ = true;
          return false;
        }
      }
      return true;
    }
    if (!mirror_ && parsed.is_object() && parsed.value("kind", "") == "alive") return true;  // still starting
    if (!mirror_) {
      result_.error = remote_.host + " sent '" + line.substr(0, 80) + "' before saying which run it follows";
      return false;
    }
    try {
      mirror_->apply(line);
    } catch (const TrackingError& e) {
      result_.error = e.what();
      return false;
    }
    if (parsed.is_object() && parsed.value("kind", "") == "cursor") {
      got_a_batch_ = true;
      if (result_.local_run == 0)
        note("[rlwb] run " + std::to_string(result_.remote_run) + " on " + remote_.host +
             " is mirrored into run " + std::to_string(mirror_->local_run()) + " of " + options_.local_db);
      result_.local_run = mirror_->local_run();
    }
    if (auto status = mirror_->end_status()) {
      result_.status = *status;
      result_.local_run = mirror_->local_run();
      return false;
    }
    return true;
  }

  const RemoteHost& remote_;
  const RemoteFollowOptions& options_;
  RemoteFollowResult result_;
  std::unique_ptr<RunMirror> mirror_;
  int64_t controller_pid_ = 0;
  bool stop_sent_ = false, got_a_batch_ = false, ask_again_now_ = false;
  std::string why_;
};

}  // namespace

RemoteFollowResult follow_remote_run(const RemoteHost& remote, const RemoteFollowOptions& options) {
  return Follower(remote, options).run();
}

}  // namespace rlwb::core
