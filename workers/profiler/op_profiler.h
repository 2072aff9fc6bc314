// The worker's half of the profiler (docs/profiler.md). While a call whose
// context says "profile" runs, it is pushed as a LibTorch record-function
// user scope ("rlwb/<node>/<method>", so Kineto and other observers see the
// context too), and a RecordFunction callback -- thread-local, added for the
// call and removed after it, so unprofiled work pays nothing -- attributes
// every ATen operator, forward and backward, to it: the worker's calling-context tree
// grows node -> method -> operator (nested operators as children), with
// native frames between a method and its operators when asked. Per frame:
// calls and wall time; per method also the thread's CPU time and, where
// perf_event_open is allowed, cycles and instructions; bytes allocated
// through c10's memory reporting; sampled input shapes; on a CUDA worker,
// the kernels, memcpy bytes and synchronisation waits each operator caused
// (CUPTI, cupti_kernels.h). Aggregated as it
// goes: no event is kept unless `trace` is set. collect() hands the tree
// over, with the window's allocator peak, the memory the worker may use
// (its CUDA device's, else the host's or its cgroup's) and the process's
// resident-set peak (memory_limits.h), and starts a new tree.
//
// Only the calling thread's operators are attributed (on CPU the autograd
// engine runs a call's backward on that thread); operators on other threads
// are counted and named in a note.
#pragma once

#include <nlohmann/json.hpp>

#include <memory>
#include <string>

namespace at {
struct RecordFunction;
}

namespace rlwb::workers::profiler {

struct ProfilerSettings {
  bool shapes = true;
  bool native_stacks = false;
  bool trace = false;
  bool hardware_counters = true;
  std::string device = "cpu";  // the worker's, set by the worker: "cuda..." turns CUPTI on
  static ProfilerSettings from_json(const nlohmann::json& j);
};

// A profiled call's context as a LibTorch user scope, "rlwb/<node>/<method>",
// for every RecordFunction observer (torch's profiler too, with
// profile.engine=kineto). OpProfiler::CallScope opens one itself.
class ContextUserScope {
 public:
  ContextUserScope(const std::string& node, const std::string& method);
  ~ContextUserScope();
  ContextUserScope(const ContextUserScope&) = delete;
  ContextUserScope& operator=(const ContextUserScope&) = delete;

 private:
  std::string label_;
  std::unique_ptr<at::RecordFunction> scope_;
};

class OpProfiler {
 public:
  static OpProfiler& instance();  // one per process: RecordFunction callbacks are global
  ~OpProfiler();

  // Sets what to record; profiled calls (CallScope) only after this.
  void configure(const ProfilerSettings& settings);
  bool configured() const;

  // One profiled call on this thread, from construction to destruction.
  class CallScope {
   public:
    CallScope(OpProfiler& profiler, const std::string& node, const std::string& method);
    ~CallScope();
    CallScope(const CallScope&) = delete;
    CallScope& operator=(const CallScope&) = delete;

   private:
    struct State;
    std::unique_ptr<State> state_;
  };

  // {host, pid, intra_op_threads, peak_bytes, notes, tree[, trace]} of the
  // calls since the last collect; resets the tree.
  nlohmann::json collect();

  struct Impl;

 private:
  OpProfiler();
  std::unique_ptr<Impl> impl_;
};

}  // namespace rlwb::workers::profiler
