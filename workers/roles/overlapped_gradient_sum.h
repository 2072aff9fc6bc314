// OverlappedGradientSum: the data-parallel sum of a FlatAdamW's gradients,
// run beside the backward pass that produces them, as DDP does.
//
// Why: summing the whole flat gradient buffer after backward() has
// returned blocks the rank for the whole collective; the profiler's
// collective-not-overlapped rule measured it at a tenth of the default
// experiment's update. Here the buffer is cut into buckets, from its end
// (the last layers, whose gradients backward produces first) to its start;
// once every parameter of a bucket has its gradient accumulated, the
// bucket's all-reduce starts (c10d, in the background) while backward goes
// on with the earlier layers. Buckets start strictly in order, so every
// rank issues the same collectives in the same sequence whatever the
// timing; a parameter that got no gradient is summed at finish().
//
// Use: arm() before the last backward of an optimizer step (the earlier
// micro-batches only accumulate), then finish() after it. Between the two,
// nothing but backward may write the gradients.
#pragma once

#include "workers/model/flat_adamw.h"
#include "workers/spmd_group.h"

#include <memory>
#include <vector>

namespace rlwb::workers::roles {

class OverlappedGradientSum {
 public:
  // `optimizer` must outlive this object; buckets hold about bucket_bytes
  // (0: a quarter of the buffer, kept between 256 KiB and 25 MiB).
  OverlappedGradientSum(model::FlatAdamW& optimizer, SpmdGroup& group, int64_t bucket_bytes = 0);
  ~OverlappedGradientSum();
  OverlappedGradientSum(const OverlappedGradientSum&) = delete;
  OverlappedGradientSum& operator=(const OverlappedGradientSum&) = delete;

  // The next backward pass's accumulated gradients are summed over the
  // ranks as they become final; `ride_along` values (counts, metric sums)
  // are summed beside them, in float64.
  void arm(const std::vector<double>& ride_along = {});
  bool armed() const;
  // Starts the buckets backward did not complete, waits for every sum, and
  // returns the summed ride_along values. Throws if not armed.
  std::vector<double> finish();
  // How many buckets' sums have started (in this or the last armed backward).
  size_t buckets_started() const;
  // Buckets, end of the buffer first: [begin, end) element ranges.
  std::vector<std::pair<int64_t, int64_t>> buckets() const;

 private:
  struct State;
  std::shared_ptr<State> state_;  // shared with the autograd hooks
  void hook_accumulators();
};

}  // namespace rlwb::workers::roles
