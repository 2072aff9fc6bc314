// Dispatch modes: how one call on a worker group becomes one call per rank,
// and how the per-rank replies become one result. The mode is declared next
// to the worker method (workers/method_registry.h) and reaches the
// controller when the worker registers; callers never name it.
//   broadcast      same input to every rank; result = rank 0's reply, all kept
//   rank0          only rank 0 runs it
//   split_dp       rows chunked over all ranks (padded when uneven, padding
//                  stripped after), replies concatenated in rank order;
//                  a chunk that ends in added rows says how many in its
//                  meta (kPaddingRowsKey), so a method that trains or
//                  measures leaves them out
//   split_dp_mesh  rows chunked over the DP groups of a (dp, pp, tp) mesh;
//                  every tp/pp rank of a DP group gets the same chunk; only
//                  collectors (tp == 0, last pp stage) are concatenated
//   split_generation_mesh  split_dp_mesh over the model's generation mesh:
//                  the replicas its 3D-HybridEngine generates with
//                  (workers/hybrid_engine/hybrid_layout.h; the training
//                  mesh when the model has no generation layout)
//   all_to_all     the caller gives one input per rank; replies concatenated
// Pure functions on Batch: unit-tested without processes.
#pragma once

#include "core/batch/batch.h"
#include "core/mesh/mesh.h"

#include <optional>
#include <string>
#include <vector>

namespace rlwb::core {

enum class DispatchMode { broadcast, rank0, split_dp, split_dp_mesh, split_generation_mesh, all_to_all };

// meta key of a split chunk: how many of its last rows are copies added to
// even out the chunks (absent: none).
inline constexpr const char* kPaddingRowsKey = "padding_rows";
// That count of a batch (0 when absent).
int64_t padding_rows(const Batch& chunk);

std::string dispatch_mode_name(DispatchMode mode);
DispatchMode dispatch_mode_from_name(const std::string& name);  // throws std::invalid_argument

struct DispatchPlan {
  std::vector<std::optional<Batch>> inputs;  // per rank; nullopt = rank not called
  int64_t input_rows = 0;                    // rows before padding
  int64_t padded_rows = 0;                   // rows added to even out the chunks
  int parts = 1;                             // number of chunks the rows were split into
};

// per_rank is used by all_to_all only (must have world() entries).
DispatchPlan plan_dispatch(DispatchMode mode, const Mesh& mesh, const Batch& input,
                           const std::vector<Batch>& per_rank = {});

// Turns per-rank replies (same indexing as plan.inputs; unused ranks empty)
// into the group's result. Padding is stripped in proportion to the rows a
// rank returned per row it received (a method may return k rows per row).
Batch collect_replies(DispatchMode mode, const Mesh& mesh, const DispatchPlan& plan,
                      const std::vector<Batch>& replies);

}  // namespace rlwb::core
