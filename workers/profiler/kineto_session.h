// torch's own profiler (Kineto, through LibTorch's C++ API) on a worker,
// for profile.engine=kineto: records the same operators RLWB's profiler
// does, with input shapes, and writes its Chrome trace at stop. The
// baseline bench_profiler compares RLWB's profile against, in overhead and
// in size; also a way to get a Kineto trace of an RLWB run.
#pragma once

#include <cstdint>
#include <string>

namespace rlwb::workers::profiler {

class KinetoSession {
 public:
  void start();
  // Writes the trace to `path`; returns its size in bytes.
  int64_t stop(const std::string& path);
  bool running() const { return running_; }

 private:
  bool running_ = false;
};

}  // namespace rlwb::workers::profiler
