// How every RLWB program reads its command line: CLI11, with one set of
// answers everywhere.
//   - `--help` (or -h) at every level prints that level's flags and exits 0.
//   - A usage error -- an unknown flag or command, a missing or mistyped
//     value, a combination the program refuses -- prints
//     "PROGRAM COMMAND: what is wrong, naming the flag" and where the help
//     is, to stderr, and exits 2 (kUsageExitCode).
//   - Any other failure of the command prints "PROGRAM COMMAND: message" and
//     exits 1.
// Used by app/ (rlwb, rlwb-gui), workers/worker_main.cpp (rlwb-worker),
// sandbox/ (rlwb-sandbox and its run/serve commands, which rlwb sandbox
// reuses) and every bench/ program. Header-only, so that the small static
// rlwb-sandbox-executor can use it without linking a library.
//
// A program without subcommands:
//   CLI::App app{"what it does", "bench_x"};
//   app.add_option("--steps", steps, "timed steps")->check(CLI::PositiveNumber);
//   if (auto exit_code = core::parse_command_line(app, argc, argv)) return *exit_code;
// A program with subcommands registers each leaf as a core::Subcommand (the
// CLI11 subcommand and the function that does its work) and ends with
//   return core::run_chosen_subcommand(app, subcommands, argc, argv);
#pragma once

#include <CLI/CLI.hpp>
#include <functional>
#include <iostream>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

namespace rlwb::core {

inline constexpr int kUsageExitCode = 2;

// A usage problem that CLI11 cannot see (two flags that exclude each other,
// a file that cannot be read): thrown by a command's work, it becomes exit
// code 2 with the command's name in front of the message.
class UsageError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// A leaf command: the CLI11 subcommand (owned by its parent App) and its work,
// which runs once the command line has chosen it and returns the exit code.
struct Subcommand {
  CLI::App* app = nullptr;
  std::function<int()> run;
};

// "rlwb runs show": the names from the top App down to `app`.
inline std::string command_path(const CLI::App& app) {
  std::string path = app.get_name();
  for (const CLI::App* up = app.get_parent(); up != nullptr; up = up->get_parent())
    path = up->get_name() + " " + path;
  return path;
}

// The App the parse stopped in: the last subcommand chosen, at any depth.
inline const CLI::App& deepest_chosen(const CLI::App& app) {
  const CLI::App* at = &app;
  for (;;) {
    std::vector<const CLI::App*> chosen =
        at->get_subcommands([](const CLI::App* sub) { return sub->parsed(); });
    if (chosen.empty()) return *at;
    at = chosen.front();
  }
}

// Prints "PATH: message" and where the help is; returns kUsageExitCode.
inline int report_usage_error(const CLI::App& app, const std::string& message,
                              std::ostream& err = std::cerr) {
  const std::string path = command_path(app);
  err << path << ": " << message << "\n(see '" << path << " --help')\n";
  return kUsageExitCode;
}

namespace detail {

// The names of the subcommands of `app`, for "choose from: ...".
inline std::string subcommand_names(const CLI::App& app) {
  std::string names;
  for (const CLI::App* sub : app.get_subcommands([](const CLI::App*) { return true; }))
    names += (names.empty() ? "" : ", ") + sub->get_name();
  return names;
}

// CLI11's message, or a plainer one where CLI11 does not name the argument
// ("The following argument was not expected: 5 --respons").
inline std::string usage_message(const CLI::App& at, const CLI::ParseError& e) {
  const std::vector<std::string> left = at.remaining();
  const bool has_subcommands = !at.get_subcommands([](const CLI::App*) { return true; }).empty();
  const bool none_chosen = at.get_subcommands([](const CLI::App* sub) { return sub->parsed(); }).empty();
  if (has_subcommands && none_chosen) {
    // "rlwb reward maths": "unknown reward 'maths'"; at the top, "unknown command".
    const std::string noun = at.get_parent() == nullptr ? "command" : at.get_name();
    if (!left.empty() && left.front().rfind('-', 0) != 0)
      return "unknown " + noun + " '" + left.front() + "' (choose from: " + subcommand_names(at) + ")";
    if (at.get_require_subcommand_min() > 0 && dynamic_cast<const CLI::RequiredError*>(&e))
      return "which " + noun + "? choose from: " + subcommand_names(at);
  }
  if (dynamic_cast<const CLI::ExtrasError*>(&e) != nullptr && !left.empty()) {
    const std::string& first = left.front();
    if (first.size() > 1 && first[0] == '-') return "unknown option " + first.substr(0, first.find('='));
    return "unexpected argument '" + first + "'";
  }
  return e.what();
}

}  // namespace detail

// Parses argv into `app`. Returns the exit code when the program should stop
// now: 0 after --help or --version (printed to `out`), kUsageExitCode after a
// usage error (printed to `err`); nullopt when the program goes on.
inline std::optional<int> parse_command_line(CLI::App& app, int argc, const char* const* argv,
                                             std::ostream& out = std::cout, std::ostream& err = std::cerr) {
  try {
    app.parse(argc, argv);
    return std::nullopt;
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e, out, err);
  } catch (const CLI::CallForAllHelp& e) {
    return app.exit(e, out, err);
  } catch (const CLI::CallForVersion& e) {
    return app.exit(e, out, err);
  } catch (const CLI::ParseError& e) {
    return report_usage_error(deepest_chosen(app), detail::usage_message(deepest_chosen(app), e), err);
  }
}

// Runs the one of `subcommands` that the parse of `app` chose: its exit
// code, kUsageExitCode for a UsageError it throws, 1 with the message for
// any other exception. None chosen: prints the help, kUsageExitCode.
inline int run_parsed_subcommand(const CLI::App& app, const std::vector<Subcommand>& subcommands,
                                 std::ostream& err = std::cerr) {
  for (const Subcommand& command : subcommands) {
    if (!command.app->parsed()) continue;
    try {
      return command.run();
    } catch (const UsageError& e) {
      return report_usage_error(*command.app, e.what(), err);
    } catch (const std::exception& e) {
      err << command_path(*command.app) << ": " << e.what() << "\n";
      return 1;
    }
  }
  err << app.help();
  return kUsageExitCode;
}

// parse_command_line, then run_parsed_subcommand.
inline int run_chosen_subcommand(CLI::App& app, const std::vector<Subcommand>& subcommands, int argc,
                                 const char* const* argv) {
  if (auto exit_code = parse_command_line(app, argc, argv)) return *exit_code;
  return run_parsed_subcommand(app, subcommands);
}

}  // namespace rlwb::core
