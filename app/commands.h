// The rlwb subcommands, one function each, on a parsed command line.
#pragma once

#include <map>
#include <stdexcept>
#include <string>
#include <vector>

namespace rlwb::core {
class TrackingReader;
}

namespace rlwb::app {

class UsageError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

struct CommandLine {
  std::string command;
  std::vector<std::string> positional;        // after the command
  std::vector<std::string> overrides;         // key.path=value
  std::map<std::string, std::string> flags;   // --db PATH -> {"db": PATH}
  std::string flag(const std::string& name, const std::string& fallback) const {
    auto it = flags.find(name);
    return it == flags.end() ? fallback : it->second;
  }
};

CommandLine parse_command_line(const std::vector<std::string>& args);

int cmd_run(const CommandLine& cl, const char* argv0);
int cmd_validate(const CommandLine& cl);
int cmd_runs(const CommandLine& cl);
// app/cmd_runs_compare.cpp: rlwb runs compare ID ID... / rlwb runs export ID
int cmd_runs_compare(const CommandLine& cl, core::TrackingReader& reader);
int cmd_runs_export(const CommandLine& cl, core::TrackingReader& reader);
int cmd_reward(const CommandLine& cl);   // app/cmd_reward.cpp: rlwb reward math ...
int cmd_sandbox(const CommandLine& cl);  // app/cmd_sandbox.cpp: rlwb sandbox run|serve ...

}  // namespace rlwb::app
