// AlgorithmError: the one error type of core/algorithms, and Metrics, the
// name -> value map that loss functions return (verl's metric names).
// Every function in core/algorithms throws AlgorithmError for bad input: a
// tensor whose shape does not match the response mask, an unknown option
// name, an option out of range. The message names the function, the
// argument and what to do about it.
#pragma once

#include <map>
#include <stdexcept>
#include <string>

namespace rlwb::core::algorithms {

class AlgorithmError : public std::invalid_argument {
 public:
  using std::invalid_argument::invalid_argument;
};

// Metric name (verl's, e.g. "actor/pg_loss") -> value, ready for tracking.
using Metrics = std::map<std::string, double>;

}  // namespace rlwb::core::algorithms
