// rlwb profile show | export | diff, and rlwb analyze: a run's stored
// profile read back from the tracking DB. Argument handling only; the
// reports, exports, diff and analyzer are core/profile. A profile that
// cannot be read (unknown run, not profiled, steps outside the profiled
// ones, another schema) is core's ProfileError, printed as it is, exit 1.
#include <fstream>
#include <iostream>
#include <memory>
#include <optional>

#include "app/commands.h"
#include "core/profile/analyzer.h"
#include "core/profile/profile_diff.h"
#include "core/profile/profile_export.h"
#include "core/profile/profile_report.h"
#include "core/profile/profile_store.h"

namespace rlwb::app {
namespace {

namespace profile = core::profile;

struct ShowArgs {
  std::string db = kDefaultTrackingDb;
  int64_t run = 0;
  std::string node, worker, steps;
  size_t top = 20;
};

struct ExportArgs {
  std::string db = kDefaultTrackingDb;
  int64_t run = 0;
  std::string format, out, steps;
};

struct DiffArgs {
  std::string db = kDefaultTrackingDb;
  int64_t run_a = 0, run_b = 0;
  size_t top = 20;
};

struct AnalyzeArgs {
  std::string db = kDefaultTrackingDb;
  int64_t run = 0;
  std::string steps;
};

// A bad --steps is the user's typing: a usage error (exit 2), with the forms.
std::optional<profile::StepRange> step_range(const std::string& text) {
  if (text.empty()) return std::nullopt;
  try {
    return profile::parse_step_range(text);
  } catch (const std::invalid_argument& e) {
    throw core::UsageError(std::string("--steps: ") + e.what());
  }
}

profile::RunProfile load(const std::string& db, int64_t run, const std::string& steps = "") {
  core::TrackingReader reader = open_tracking_reader(db);
  return profile::load_run_profile(reader, run, step_range(steps));
}

// Writes the whole of `bytes` to `path`, or says why it could not.
void write_file(const std::string& path, const std::string& bytes) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  if (!out)
    throw std::runtime_error("cannot write " + path +
                             ": cannot open it for writing (does its folder exist?)");
  out << bytes;
  out.close();
  if (!out) throw std::runtime_error("cannot write " + path + ": writing failed (disk full?)");
}

int export_profile(const ExportArgs& args) {
  if (args.format == "pprof" && (args.out.empty() || args.out == "-"))
    throw core::UsageError("--format pprof writes a binary file: give it --out FILE (e.g. --out run.pb.gz)");
  const profile::RunProfile p = load(args.db, args.run, args.steps);
  std::string bytes;
  if (args.format == "folded") {
    bytes = profile::folded_stacks(p);
  } else if (args.format == "chrome") {
    bytes = profile::chrome_trace(p).dump() + "\n";
  } else {
    bytes = profile::pprof_profile(p);
  }
  if (args.out.empty() || args.out == "-") {
    std::cout << bytes;
    return 0;
  }
  write_file(args.out, bytes);
  std::cerr << "run " << args.run << "'s profile written to " << args.out << " (" << args.format << ")\n";
  return 0;
}

}  // namespace

std::vector<core::Subcommand> add_profile_commands(CLI::App& rlwb) {
  CLI::App* family =
      rlwb.add_subcommand("profile", "read a run's stored profile (runs with profile.enabled=true)");
  family->require_subcommand(1);
  const char* steps_help = "only these profiled steps: A-B, A- (to the end) or A";

  auto show_args = std::make_shared<ShowArgs>();
  CLI::App* show = family->add_subcommand("show", "the hottest calling contexts and the per-node breakdown");
  show->add_option("RUN", show_args->run, "run id (see 'rlwb runs list')")->required();
  show->add_option("--node", show_args->node, "only contexts under this dataflow node");
  show->add_option("--worker", show_args->worker, "only this worker (main/1) or pool (main)");
  show->add_option("--top", show_args->top, "contexts shown; 0: all")->capture_default_str();
  show->add_option("--steps", show_args->steps, steps_help);
  add_db_option(*show, show_args->db);

  auto export_args = std::make_shared<ExportArgs>();
  CLI::App* export_command =
      family->add_subcommand("export", "the profile for other tools (docs/profiler.md)");
  export_command->add_option("RUN", export_args->run, "run id")->required();
  export_command
      ->add_option(
          "--format", export_args->format,
          "chrome (Perfetto / chrome://tracing JSON), folded (flame graphs) or pprof (gzip'd protobuf)")
      ->required()
      ->check(CLI::IsMember({"chrome", "folded", "pprof"}));
  export_command->add_option("--out", export_args->out, "write here (default: stdout; pprof needs a file)");
  export_command->add_option("--steps", export_args->steps, steps_help);
  add_db_option(*export_command, export_args->db);

  auto diff_args = std::make_shared<DiffArgs>();
  CLI::App* diff =
      family->add_subcommand("diff", "contexts ranked by the change of their self time per step");
  diff->add_option("RUN_A", diff_args->run_a, "the run to compare from")->required();
  diff->add_option("RUN_B", diff_args->run_b, "the run to compare to")->required();
  diff->add_option("--top", diff_args->top, "changes shown; 0: all")->capture_default_str();
  add_db_option(*diff, diff_args->db);

  auto analyze_args = std::make_shared<AnalyzeArgs>();
  CLI::App* analyze =
      rlwb.add_subcommand("analyze", "what to change in a run, from its profile, ranked by expected gain");
  analyze->add_option("RUN", analyze_args->run, "run id (profiled: profile.enabled=true)")->required();
  analyze->add_option("--steps", analyze_args->steps, steps_help);
  add_db_option(*analyze, analyze_args->db);

  return {
      {show,
       [show_args] {
         const profile::RunProfile p = load(show_args->db, show_args->run, show_args->steps);
         std::cout << profile::format_profile_report(
             p, {.node = show_args->node, .worker = show_args->worker, .top = show_args->top});
         return 0;
       }},
      {export_command, [export_args] { return export_profile(*export_args); }},
      {diff,
       [diff_args] {
         const profile::RunProfile a = load(diff_args->db, diff_args->run_a);
         const profile::RunProfile b = load(diff_args->db, diff_args->run_b);
         std::cout << profile::format_profile_diff(profile::diff(a, b), diff_args->top);
         return 0;
       }},
      {analyze,
       [analyze_args] {
         const profile::RunProfile p = load(analyze_args->db, analyze_args->run, analyze_args->steps);
         std::cout << "Run " << p.run << ": findings ranked by expected gain\n\n"
                   << profile::format_findings(profile::analyze(p));
         return 0;
       }},
  };
}

}  // namespace rlwb::app
