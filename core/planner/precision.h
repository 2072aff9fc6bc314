// Precision: bytes per parameter of each kind of state a model keeps, as
// the memory model (memory_model.h) counts them.
//   fp32        RLWB's CPU workers: fp32 weights and gradients, AdamW's two
//               fp32 moments, on every data-parallel rank
//   bf16-mixed  the GPU systems of the HybridFlow paper (Megatron-LM):
//               bf16 weights, fp32 gradients, fp32 master weights and two
//               moments sharded over the data-parallel ranks (the
//               distributed optimizer)
// A device profile names the precision its figures are for.
#pragma once

#include <string>
#include <vector>

namespace rlwb::core::planner {

struct Precision {
  std::string name;
  double parameter_bytes = 4;
  double gradient_bytes = 4;
  double optimizer_bytes = 8;  // per parameter, all optimizer state
  double activation_bytes = 4;
  bool optimizer_sharded_over_dp = false;
};

// Throws PlanError naming the known precisions for any other name.
Precision precision_named(const std::string& name);
const std::vector<std::string>& precision_names();

}  // namespace rlwb::core::planner
