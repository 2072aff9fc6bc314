// PlanError: input the planner cannot work with -- a graph file it cannot
// read a shape or a workload from, a device profile that is missing or
// malformed, a device count too small for any placement. The message says
// what is wrong and what to do; `rlwb plan` prints it as it is.
#pragma once

#include <stdexcept>

namespace rlwb::core::planner {

class PlanError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

}  // namespace rlwb::core::planner
