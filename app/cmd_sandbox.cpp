// rlwb sandbox ...: the code sandbox (sandbox/cli.h). Argument parsing only.
//   rlwb sandbox run --lang python3|bash|c|cpp FILE [--stdin FILE] [--json] [--endpoint E]
//   rlwb sandbox serve [--endpoint E] [--executors N] [--max-queued N]
#include <iostream>

#include "app/commands.h"
#include "sandbox/cli.h"

namespace rlwb::app {

int cmd_sandbox(const CommandLine& cl) {
  if (cl.positional.empty())
    throw UsageError(std::string("sandbox needs a command: run or serve\n") + sandbox::cli_usage());
  sandbox::CliArgs args;
  args.command = cl.positional[0];
  args.positional.assign(cl.positional.begin() + 1, cl.positional.end());
  // A FILE with '=' in its name reaches us as an override.
  args.positional.insert(args.positional.end(), cl.overrides.begin(), cl.overrides.end());
  args.flags = cl.flags;
  // `--json FILE`: the generic parser gave FILE to --json.
  auto json = args.flags.find("json");
  if (json != args.flags.end() && json->second != "true" && json->second != "false" &&
      json->second != "1" && json->second != "0") {
    args.positional.push_back(json->second);
    json->second = "true";
  }
  return sandbox::cli_main(args, std::cout, std::cerr);
}

}  // namespace rlwb::app
