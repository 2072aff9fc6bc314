// Whether this library's own at::parallel_for calls run on torch's
// intra-op threads.
//
// ATen's parallel_for is a header template: in a LibTorch built with
// OpenMP (the torch wheel) it opens an `omp parallel` region in the
// caller's translation unit, and a file compiled without -fopenmp
// silently ignores the pragma and runs the whole range on the calling
// thread. That is what happened to FlatAdamW's update and the no-grad
// RMSNorm (bench/RESULTS.md, "Session 21"): with two threads the update
// took as long as with one. workers/CMakeLists.txt links OpenMP into
// rlwb_workers; this is the check that it did.
#pragma once

#include <cstdint>

namespace rlwb::workers {

// Runs at::parallel_for over `work` items of grain 1 and returns how many
// distinct intra-op threads took a part: min(work, at::get_num_threads())
// when parallel_for is really parallel here, 1 when it is not.
int parallel_for_threads(int64_t work);

}  // namespace rlwb::workers
