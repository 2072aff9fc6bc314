// Symbolic equivalence through GiNaC, under a time bound.
//
// GiNaC is not thread-safe (its reference counts are plain integers), and a
// simplification can blow up (expanding (x+1)^{50} over a big denominator). So
// all GiNaC work runs on one engine thread; a caller waits at most `timeout`
// and then gets kTimedOut. The engine finishes the abandoned expression on its
// own; while it is still busy with one, later calls get kTimedOut at once
// instead of queueing behind it. Callers also keep expressions small (see
// compare.cpp) so that an abandoned one ends soon.
//
// Inputs are infix strings as printed by rewards/math/infix.h; both sides are
// read by one GiNaC parser so that their symbols are the same objects.
#pragma once

#include <chrono>
#include <string>

namespace rlwb::rewards {

struct SymbolicResult {
  enum class Outcome {
    kYes,         // the difference simplifies to 0 / the ratio is a nonzero number
    kNo,          // it does not (detail: what it simplifies to)
    kTimedOut,    // the time bound passed first
    kUnreadable,  // GiNaC could not read or simplify an input (detail: its message)
  };
  Outcome outcome = Outcome::kUnreadable;
  int ratio_sign = 0;  // for ginac_ratio_is_constant: the sign of the constant
  std::string detail;
};

// Does normal(a - b) vanish?
SymbolicResult ginac_difference_is_zero(const std::string& a, const std::string& b,
                                        std::chrono::milliseconds timeout);
// Is normal(a / b) a nonzero number? (Same equation or inequality up to scale.)
SymbolicResult ginac_ratio_is_constant(const std::string& a, const std::string& b,
                                       std::chrono::milliseconds timeout);

}  // namespace rlwb::rewards
