// Version string of this build, shown by `rlwb --version` and stored with runs.
#include "core/common/version.h"
namespace rlwb::core {
const char* version() { return "0.1.0"; }
}  // namespace rlwb::core
