// rlwb sandbox ...: placeholder until the sandbox lands (issue 4).
#include "app/commands.h"
namespace rlwb::app {
int cmd_sandbox(const CommandLine&) { throw std::runtime_error("rlwb sandbox is not built yet"); }
}  // namespace rlwb::app
