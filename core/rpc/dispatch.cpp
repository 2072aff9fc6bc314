#include "core/rpc/dispatch.h"

#include "core/rpc/column_padding.h"

#include <algorithm>
#include <stdexcept>

namespace rlwb::core {
namespace {

// Marks, in each chunk's meta, how many of its last rows lie beyond the
// input's rows (copies that chunk() added).
void mark_padding(std::vector<Batch>& chunks, int64_t input_rows) {
  for (size_t i = 0; i < chunks.size(); ++i) {
    const int64_t rows = chunks[i].rows(), begin = static_cast<int64_t>(i) * rows;
    const int64_t added = std::clamp<int64_t>(begin + rows - std::max(begin, input_rows), 0, rows);
    if (added > 0) chunks[i].meta()[kPaddingRowsKey] = added;
  }
}

}  // namespace

int64_t padding_rows(const Batch& chunk) {
  const auto& meta = chunk.meta();
  if (!meta.is_object()) return 0;
  auto it = meta.find(kPaddingRowsKey);
  return it != meta.end() && it->is_number_integer() ? it->get<int64_t>() : 0;
}

std::string dispatch_mode_name(DispatchMode mode) {
  switch (mode) {
    case DispatchMode::broadcast:
      return "broadcast";
    case DispatchMode::rank0:
      return "rank0";
    case DispatchMode::split_dp:
      return "split_dp";
    case DispatchMode::split_dp_mesh:
      return "split_dp_mesh";
    case DispatchMode::split_generation_mesh:
      return "split_generation_mesh";
    case DispatchMode::all_to_all:
      return "all_to_all";
  }
  return "?";
}

DispatchMode dispatch_mode_from_name(const std::string& name) {
  for (auto m : {DispatchMode::broadcast, DispatchMode::rank0, DispatchMode::split_dp,
                 DispatchMode::split_dp_mesh, DispatchMode::split_generation_mesh, DispatchMode::all_to_all})
    if (dispatch_mode_name(m) == name) return m;
  throw std::invalid_argument(
      "unknown dispatch mode '" + name +
      "' (use broadcast, rank0, split_dp, split_dp_mesh, split_generation_mesh or all_to_all)");
}

DispatchPlan plan_dispatch(DispatchMode mode, const Mesh& mesh, const Batch& input,
                           const std::vector<Batch>& per_rank) {
  const int world = mesh.world();
  DispatchPlan plan;
  plan.inputs.resize(world);
  plan.input_rows = input.rows();
  switch (mode) {
    case DispatchMode::broadcast:
      for (auto& in : plan.inputs) in = input;
      break;
    case DispatchMode::rank0:
      plan.inputs[0] = input;
      break;
    case DispatchMode::split_dp: {
      plan.parts = world;
      auto chunks = input.chunk(world, /*pad=*/true, &plan.padded_rows);
      mark_padding(chunks, plan.input_rows);
      for (int r = 0; r < world; ++r) plan.inputs[r] = chunks[r];
      break;
    }
    case DispatchMode::split_dp_mesh:
    case DispatchMode::split_generation_mesh: {  // the caller passes the generation mesh
      plan.parts = mesh.dp;
      auto chunks = input.chunk(mesh.dp, /*pad=*/true, &plan.padded_rows);
      mark_padding(chunks, plan.input_rows);
      for (int r = 0; r < world; ++r) plan.inputs[r] = chunks[mesh.dp_index(r)];
      break;
    }
    case DispatchMode::all_to_all:
      if (static_cast<int>(per_rank.size()) != world)
        throw std::invalid_argument("all_to_all needs one input per rank: got " +
                                    std::to_string(per_rank.size()) + " for " + std::to_string(world) +
                                    " ranks");
      for (int r = 0; r < world; ++r) plan.inputs[r] = per_rank[r];
      break;
  }
  return plan;
}

Batch collect_replies(DispatchMode mode, const Mesh& mesh, const DispatchPlan& plan,
                      const std::vector<Batch>& replies) {
  std::vector<Batch> parts;
  switch (mode) {
    case DispatchMode::broadcast:
    case DispatchMode::rank0:
      return replies.at(0);
    case DispatchMode::split_dp:
      parts = replies;
      break;
    case DispatchMode::split_dp_mesh:
    case DispatchMode::split_generation_mesh:
      for (int r = 0; r < mesh.world(); ++r)
        if (mesh.is_collector(r)) parts.push_back(replies.at(r));
      break;
    case DispatchMode::all_to_all:
      parts = replies;
      break;
  }
  pad_to_widest(parts);  // each rank padded its prompts and responses to its own widest
  Batch merged = Batch::concat(parts);
  if (plan.padded_rows > 0 && mode != DispatchMode::all_to_all) {
    int64_t padded_total = plan.input_rows + plan.padded_rows;
    int64_t out_rows = merged.rows();
    if (out_rows % padded_total != 0)
      throw std::runtime_error("dispatch: ranks returned " + std::to_string(out_rows) + " rows for " +
                               std::to_string(padded_total) +
                               " padded input rows; a split method must return a whole number of rows per "
                               "input row so the padding can be removed");
    int64_t per_row = out_rows / padded_total;
    merged = merged.slice(0, plan.input_rows * per_row);
  }
  return merged;
}

}  // namespace rlwb::core
