// The one exception type of the sandbox library: bad input (unknown
// language, malformed request, limits out of range) and failures of the
// sandbox itself (kernel refused a namespace, executor died). The message
// always says what was wrong and what to do. Verdicts about the *program*
// are never exceptions; they are Verdicts (verdict.h).
#pragma once

#include <stdexcept>
#include <string>

namespace rlwb::sandbox {

class SandboxError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

}  // namespace rlwb::sandbox
