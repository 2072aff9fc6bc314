// rlwb reward ...: placeholder until the math checker lands (issue 4).
#include "app/commands.h"
namespace rlwb::app {
int cmd_reward(const CommandLine&) { throw std::runtime_error("rlwb reward is not built yet"); }
}  // namespace rlwb::app
