// The "remote" launch target: `rlwb run --remote HOST` as a local child
// (the local target does the process side), which starts the run on the
// host and mirrors it into the GUI's DB. Its workers are on the host, so
// none are listed here. Stop asks the CLI to stop, which passes SIGINT on
// to the remote controller. Kill sends SIGKILL to the remote controller
// itself; the follower there then closes the run as failed and the mirror
// brings that here (the CLI is killed too if it has not ended 15 s later).
#include <signal.h>

#include <chrono>
#include <future>

#include "core/tracking/tracking.h"
#include "ui/launch/launch_target.h"

namespace rlwb::ui {
namespace {

using Clock = std::chrono::steady_clock;

class RemoteTarget : public LaunchTarget {
 public:
  explicit RemoteTarget(std::unique_ptr<LaunchTarget> local) : local_(std::move(local)) {}

  std::string name() const override { return "remote"; }

  void start(const LaunchRequest& request) override {
    if (request.remote.host.empty()) throw std::runtime_error("name the SSH host to run on");
    remote_ = request.remote;
    db_ = request.db;
    newest_before_ = newest_run();
    killing_ = false;
    local_->start(request);
  }

  void poll() override {
    local_->poll();
    if (killing_ && local_->active() && Clock::now() - kill_at_ > std::chrono::seconds(15)) local_->kill();
  }

  bool active() const override { return local_->active(); }
  std::string state() const override {
    if (killing_ && local_->active()) return "killing the run on " + remote_.host;
    return local_->state();
  }
  int exit_code() const override { return local_->exit_code(); }
  pid_t controller_pid() const override { return local_->controller_pid(); }
  std::vector<WorkerProcess> workers(const std::string&) const override { return {}; }
  std::string log_tail(size_t max_bytes) const override { return local_->log_tail(max_bytes); }
  void stop() override { local_->stop(); }

  void kill() override {
    const int64_t pid = remote_controller_pid();
    if (pid <= 0) {  // not mirrored yet: nothing there to name
      local_->kill();
      return;
    }
    killing_ = true;
    kill_at_ = Clock::now();
    // ssh takes a moment; the frame loop must not wait for it.
    kill_job_ = std::async(std::launch::async,
                           [remote = remote_, pid] { core::signal_remote(remote, pid, SIGKILL); });
  }

 private:
  int64_t newest_run() const {
    try {
      const auto runs = core::TrackingReader(db_).list_runs();
      return runs.empty() ? 0 : runs.front().id;
    } catch (const std::exception&) {  // no DB yet
      return 0;
    }
  }

  // The remote controller's pid, from the mirrored run this launch made.
  int64_t remote_controller_pid() const {
    try {
      core::TrackingReader reader(db_);
      for (const auto& run : reader.list_runs()) {
        if (run.id <= newest_before_) break;
        std::string host, pid;
        for (const auto& [key, value] : reader.tags(run.id)) {
          if (key == "remote.host") host = value;
          if (key == "remote.pid") pid = value;
        }
        if (host == remote_.host && !pid.empty()) return std::stoll(pid);
      }
    } catch (const std::exception&) {
    }
    return 0;
  }

  std::unique_ptr<LaunchTarget> local_;
  core::RemoteHost remote_;
  std::string db_;
  int64_t newest_before_ = 0;
  bool killing_ = false;
  Clock::time_point kill_at_;
  std::future<void> kill_job_;
};

}  // namespace

std::unique_ptr<LaunchTarget> make_remote_target(std::unique_ptr<LaunchTarget> local) {
  return std::make_unique<RemoteTarget>(std::move(local));
}

}  // namespace rlwb::ui
