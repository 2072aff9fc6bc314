// rlwb: the command line. Argument parsing only; the work is in core/ and
// workers/.
//   rlwb run FILE [key.path=value ...] [--db PATH] [--name NAME] [--transport ipc|tcp]
//   rlwb validate FILE [key.path=value ...]
//   rlwb runs list [--db PATH]
//   rlwb runs show ID [--db PATH]
//   rlwb runs compare ID ID... [--metrics a,b] [--at-step N] [--keys diff|all] [--csv FILE]
//   rlwb runs export ID [--format csv|jsonl] [--out FILE]
//   rlwb reward math ... / rlwb sandbox run|serve ...
//   rlwb --version
#include "app/commands.h"
#include "core/common/version.h"

#include <cstring>
#include <iostream>
#include <string>
#include <vector>

namespace {

constexpr const char* kUsage = R"(usage:
  rlwb run FILE [key.path=value ...] [--db PATH] [--name NAME] [--transport ipc|tcp]
      run an experiment graph file (Ctrl-C stops it cleanly; the run is kept as 'interrupted')
  rlwb validate FILE [key.path=value ...]
      check a graph file and list every problem, without starting anything
  rlwb runs list [--db PATH]
  rlwb runs show ID [--db PATH]
      read the tracking database (default runs/rlwb.db)
  rlwb runs compare ID ID... [--metrics a,b] [--at-step N] [--keys diff|all] [--csv FILE] [--db PATH]
      config diff and per-metric summary (last, best, at step) of runs side by side
  rlwb runs export ID [--format csv|jsonl] [--out FILE] [--db PATH]
      every metric point of a run
  rlwb reward math --response TEXT --reference TEXT [--question TEXT] [--format text|json]
  rlwb reward math --file IN.jsonl [--out OUT.jsonl]
      the math answer checker: verdict and extracted answer
  rlwb sandbox run --lang python3|bash|c|cpp FILE [--stdin F] [--json]
  rlwb sandbox serve [--endpoint E] [--executors N] [--max-queued N]
      run a program isolated (seccomp, namespaces, limits), or serve the executor pool
  rlwb --version
)";

}  // namespace

int main(int argc, char** argv) {
  std::vector<std::string> args(argv + 1, argv + argc);
  if (args.empty() || args[0] == "help" || args[0] == "--help" || args[0] == "-h") {
    std::cout << kUsage;
    return args.empty() ? 2 : 0;
  }
  if (args[0] == "--version") {
    std::cout << "rlwb " << rlwb::core::version() << "\n";
    return 0;
  }
  try {
    rlwb::app::CommandLine cl = rlwb::app::parse_command_line(args);
    if (cl.command == "run") return rlwb::app::cmd_run(cl, argv[0]);
    if (cl.command == "validate") return rlwb::app::cmd_validate(cl);
    if (cl.command == "runs") return rlwb::app::cmd_runs(cl);
    if (cl.command == "reward") return rlwb::app::cmd_reward(cl);
    if (cl.command == "sandbox") return rlwb::app::cmd_sandbox(cl);
    std::cerr << "rlwb: unknown command '" << cl.command << "'\n" << kUsage;
    return 2;
  } catch (const rlwb::app::UsageError& e) {
    std::cerr << "rlwb: " << e.what() << "\n" << kUsage;
    return 2;
  } catch (const std::exception& e) {
    std::cerr << "rlwb: " << e.what() << "\n";
    return 1;
  }
}
