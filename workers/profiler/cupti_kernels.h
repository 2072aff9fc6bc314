// The profiler's CUDA side (docs/profiler.md): CUPTI activity records of a
// worker's kernels, memcpys and synchronisation waits, tied to the operator
// frame that launched them. While an operator runs, its frame's id is the
// calling thread's CUPTI external correlation id (kind CUSTOM0); CUPTI
// stamps each CUDA API call with it, and the kernels, copies and waits of
// that call carry the call's correlation id. fold() flushes CUPTI and adds
// per kernel name a `kernel` child frame under its operator (kernel_ns,
// kernels), memcpy bytes and sync waits to the operator, and the same to
// every frame above it (the tree's metrics are inclusive).
//
// One per process: CUPTI's activity buffers have one owner, so only when
// RLWB's own engine profiles (profile.engine=kineto gives CUPTI to
// Kineto). Nothing here throws: where CUPTI was not built, or its calls
// fail (no GPU, no driver), start() says why and the rest does nothing.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

namespace rlwb::core::profile {
class ContextTree;
struct Frame;
}  // namespace rlwb::core::profile

namespace rlwb::workers::profiler {

class CuptiKernels {
 public:
  static CuptiKernels& instance();
  ~CuptiKernels();

  // Enables the activity kinds (once; later calls return the first
  // answer). False where CUPTI is unavailable; why_unavailable() says why.
  bool start();
  bool active() const { return active_; }
  const std::string& why_unavailable() const { return why_; }

  // The calling thread's CUDA work belongs to `frame` until the matching
  // leave(); nests. Frames must live until the next fold().
  void enter(core::profile::Frame* frame);
  void leave();

  // Flushes CUPTI's buffers and folds every record since the last fold
  // into `tree`, whose frames enter() was given; then forgets those frames.
  // The device should be synchronised first, so that every kernel ended.
  // Returns notes for the profile (records not attributed, dropped).
  std::vector<std::string> fold(core::profile::ContextTree& tree);

  struct Records;  // what CUPTI handed over since the last fold

 private:
  CuptiKernels();
  bool enable();  // the activity kinds, after start() or a fold()
  bool started_ = false, active_ = false, enabled_ = false;
  std::string why_, missing_;  // why CUPTI is off; an optional kind it refused
  std::unique_ptr<Records> records_;
  // enter()'s frames since the last fold; frame ids run on from first_id_ (0: none).
  std::vector<core::profile::Frame*> frames_;
  std::unordered_map<const core::profile::Frame*, uint64_t> ids_;
  uint64_t first_id_ = 1;
};

}  // namespace rlwb::workers::profiler
