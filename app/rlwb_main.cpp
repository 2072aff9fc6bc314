// rlwb: the command line. It assembles the subcommands of app/commands.h on
// one CLI::App and runs the one chosen; `rlwb --help` and `rlwb COMMAND
// --help` list them and their flags:
//   rlwb run FILE [key.path=value ...] [--db PATH] [--name NAME] [--transport ipc|tcp]
//   rlwb validate FILE [key.path=value ...] [--resolved]
//   rlwb settings   (every setting with its type, default and meaning)
//   rlwb plan FILE --devices N [--device-profile NAME] [--write OUT.yaml] | --calibrate
//   rlwb runs list | show ID | compare ID ID... | export ID   [--db PATH]
//   rlwb profile show | export | diff ..., rlwb analyze RUN   (a run's stored profile)
//   rlwb reward math ... / rlwb sandbox run|serve ...
//   rlwb --version
#include <iostream>
#include <string>
#include <vector>

#include "app/commands.h"
#include "core/common/version.h"

int main(int argc, char** argv) {
  CLI::App rlwb{
      "RLWB: build, run and compare RLHF experiments (graph files, tracking DB, "
      "reward checkers, code sandbox).",
      "rlwb"};
  rlwb.set_version_flag("--version", std::string("rlwb ") + rlwb::core::version(),
                        "print the version and exit");
  rlwb.require_subcommand(1);
  std::vector<rlwb::core::Subcommand> commands = {
      rlwb::app::add_run_command(rlwb, argc > 0 ? argv[0] : "rlwb"), rlwb::app::add_validate_command(rlwb),
      rlwb::app::add_settings_command(rlwb), rlwb::app::add_plan_command(rlwb)};
  for (auto* family :
       {&rlwb::app::add_runs_commands, &rlwb::app::add_profile_commands, &rlwb::app::add_reward_commands,
        &rlwb::app::add_sandbox_commands, &rlwb::app::add_export_commands}) {
    std::vector<rlwb::core::Subcommand> added = (*family)(rlwb);
    commands.insert(commands.end(), added.begin(), added.end());
  }
  return rlwb::core::run_chosen_subcommand(rlwb, commands, argc, argv);
}
