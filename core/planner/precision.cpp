#include "core/planner/precision.h"

#include "core/planner/plan_error.h"

namespace rlwb::core::planner {

const std::vector<std::string>& precision_names() {
  static const std::vector<std::string> names = {"fp32", "bf16-mixed"};
  return names;
}

Precision precision_named(const std::string& name) {
  if (name == "fp32") return {"fp32", 4, 4, 8, 4, false};
  if (name == "bf16-mixed") return {"bf16-mixed", 2, 4, 12, 2, true};
  throw PlanError("unknown precision '" + name + "'; use fp32 or bf16-mixed");
}

}  // namespace rlwb::core::planner
