// The controller's side of the profiler (docs/profiler.md), for a run with
// profile.enabled: tells the workers what to record, writes one step row
// per profiled RL step (what the graph runner saw of each node and the
// step's critical path), and at the end of each window of profiled steps
// collects every worker's context tree into the tracking DB. With
// profile.engine=kineto, torch's profiler runs on the workers during each
// profiled step instead and writes one trace per worker and step. A worker whose profile cannot
// be collected leaves a warning event and a gap, never a failed run.
#pragma once

#include "core/config/profile_options.h"
#include "core/controller/graph_runner.h"
#include "core/graph/experiment.h"
#include "core/rpc/rpc_server.h"
#include "core/tracking/tracking.h"

#include <chrono>
#include <optional>
#include <string>
#include <vector>

namespace rlwb::core {

class RunProfiler {
 public:
  // `workers`: every worker id of the run; `tracking` may be null (then
  // nothing is stored, but the workers still profile: the tests' case).
  // With profile.engine=kineto the workers write torch's traces into
  // `trace_dir` (the run's log folder), one per worker and window.
  RunProfiler(const config::ProfileOptions& options, const Experiment& exp, int64_t steps, RpcServer& rpc,
              std::vector<std::string> workers, TrackingWriter* tracking, int64_t run_id,
              std::string trace_dir, std::chrono::steady_clock::time_point clock_origin = {});

  bool profiles(int64_t step) const { return options_.profiles(step); }
  // Configures the workers and writes the profile's settings row.
  void start();
  // Before an RL step (torch's profiler is started for a profiled one).
  void step_starting(int64_t step);
  // After an RL step: its step row; the worker trees when a window ends.
  void step_done(const StepReport& report);
  // Collects a window that is still open (the run ended, failed or stopped).
  void finish();

  // The trees collected so far, by worker (also when nothing is stored).
  const std::vector<profile::WorkerWindow>& collected() const { return collected_; }

 private:
  void collect(int64_t last_step);
  void collect_kineto(int64_t step);
  // Sends `args` to every worker's kProfileMethod; each reply, or null
  // where the worker failed (then a warning names it and `what`).
  std::vector<std::optional<Batch>> each_worker(const nlohmann::json& args, const std::string& what);
  void warn(const std::string& text);

  config::ProfileOptions options_;
  const Experiment& exp_;
  int64_t last_step_;  // the last profiled step
  RpcServer& rpc_;
  std::vector<std::string> workers_;
  TrackingWriter* tracking_;
  int64_t run_id_;
  std::string trace_dir_;
  std::chrono::steady_clock::time_point clock_origin_;  // the runner's: step timings count from it
  int64_t window_first_ = 0;                            // first step of the open window; 0: none open
  int64_t window_last_ = 0;                             // its last step so far
  int64_t window_steps_ = 0;                            // profiled steps in it
  std::vector<profile::WorkerWindow> collected_;
};

}  // namespace rlwb::core
