// Calibration: this machine measured into a device profile
// (core/planner/device_profile.h) for `rlwb plan --calibrate`. One device
// is one worker process with one compute thread, as RLWB's CPU pools run
// them (OMP_NUM_THREADS=1). Measured, each the median of repeats:
//   matmul        [tokens, hidden] x [hidden, mlp width] at the model's
//                 shapes -> peak_matmul_flops (efficiency 1: it is achieved)
//   attention     causal scaled-dot-product attention at the model's heads
//                 and sequence -> attention_efficiency
//   memory        a matrix-vector product over a weight larger than the
//                 caches -> memory_bandwidth
//   operators     a chain of tiny operators -> op_overhead_s
//   decode step   one token of the model's shape for a batch, kept in the
//                 profile's `measured` figures for comparison
//   collectives   all-reduce, all-gather and broadcast over c10d Gloo among
//                 2..max_ranks real processes (forked before any thread
//                 starts) at 4 KiB .. 4 MiB, fitted as latency + bytes /
//                 bandwidth per group size -> collectives
// The host's cores bound how many devices compute at once
// (concurrent_devices); its memory is shared among them (memory_gib is
// the host's memory over its cores).
#pragma once

#include <string>

#include "core/planner/device_profile.h"
#include "core/planner/model_shape.h"

namespace rlwb::workers::calibration {

struct CalibrationOptions {
  std::string name = "this-host";
  core::planner::ModelShape shape;  // the shapes to measure at
  int64_t tokens = 2048;            // rows x sequence of a micro-batch
  int64_t sequence = 16;
  int max_ranks = 4;  // largest collective group measured
};

// Throws std::runtime_error when a measurement fails (a rank that does not
// come up, a collective that times out), naming which.
core::planner::DeviceProfile calibrate_this_machine(const CalibrationOptions& options);

}  // namespace rlwb::workers::calibration
