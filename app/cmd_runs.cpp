// rlwb runs list | show ID | compare ID ID... | export ID | follow: read the tracking
// database. Argument handling only; the text is core/tracking (run_report,
// run_compare, shared with the GUI).
#include <filesystem>
#include <fstream>
#include <iostream>
#include <memory>
#include <optional>

#include "app/commands.h"
#include "core/tracking/run_compare.h"
#include "core/tracking/tracking.h"

namespace rlwb::app {
namespace {

struct ShowArgs {
  std::string db = kDefaultTrackingDb;
  int64_t id = 0;
};

struct CompareArgs {
  std::string db = kDefaultTrackingDb;
  std::vector<int64_t> ids;
  std::vector<std::string> metrics;
  std::optional<int64_t> at_step;
  std::string keys = "diff";
  bool layout_keys = false;
  std::string csv;
};

struct ExportArgs {
  std::string db = kDefaultTrackingDb;
  int64_t id = 0;
  std::string format = "csv";
  std::string out;
};

int show(const ShowArgs& args) {
  core::TrackingReader reader = open_tracking_reader(args.db);
  if (!reader.run(args.id)) throw std::runtime_error("no run " + std::to_string(args.id) + " in " + args.db);
  std::cout << core::format_run_details(reader, args.id);
  return 0;
}

int compare(const CompareArgs& args) {
  if (args.ids.size() < 2) throw core::UsageError("needs at least two run ids, e.g. 'rlwb runs compare 3 4'");
  core::TrackingReader reader = open_tracking_reader(args.db);
  core::RunComparison comparison = core::compare_runs(
      reader, args.ids, args.metrics, args.at_step,
      core::ConfigDiffOptions{.all_keys = args.keys == "all", .layout_keys = args.layout_keys});
  std::cout << core::format_comparison(comparison);
  if (!args.csv.empty()) {
    std::ofstream out(args.csv, std::ios::binary);
    out << core::summary_csv(comparison.summary);
    if (!out) throw std::runtime_error("cannot write " + args.csv);
    std::cout << "\nsummary written to " << args.csv << "\n";
  }
  return 0;
}

int export_metrics(const ExportArgs& args) {
  core::TrackingReader reader = open_tracking_reader(args.db);
  if (args.out.empty()) {
    core::export_run_metrics(reader, args.id, args.format, std::cout);
    return 0;
  }
  std::ofstream out(args.out, std::ios::binary);
  core::export_run_metrics(reader, args.id, args.format, out);
  if (!out) throw std::runtime_error("cannot write " + args.out);
  return 0;
}

}  // namespace

std::vector<core::Subcommand> add_runs_commands(CLI::App& rlwb) {
  CLI::App* runs = rlwb.add_subcommand("runs", "read the tracking database");
  runs->require_subcommand(1);

  auto list_db = std::make_shared<std::string>(kDefaultTrackingDb);
  CLI::App* list = runs->add_subcommand("list", "every run, newest first");
  add_db_option(*list, *list_db);

  auto show_args = std::make_shared<ShowArgs>();
  CLI::App* show_command =
      runs->add_subcommand("show", "params, metrics, timings, artifacts and events of a run");
  show_command->add_option("ID", show_args->id, "run id (see 'rlwb runs list')")->required();
  add_db_option(*show_command, show_args->db);

  auto compare_args = std::make_shared<CompareArgs>();
  CLI::App* compare_command = runs->add_subcommand(
      "compare", "config diff and per-metric summary (last, best, at step), side by side");
  compare_command->add_option("IDS", compare_args->ids, "two or more run ids")->required();
  compare_command->add_option("--metrics", compare_args->metrics, "metric keys to summarize (default: all)")
      ->delimiter(',');
  compare_command->add_option("--at-step", compare_args->at_step,
                              "also show each metric's value at this step");
  compare_command
      ->add_option("--keys", compare_args->keys, "config keys: 'diff' (those that differ) or 'all'")
      ->check(CLI::IsMember({"diff", "all"}))
      ->capture_default_str();
  compare_command->add_flag("--layout-keys", compare_args->layout_keys,
                            "also list the keys under layout: (the GUI editor's node positions)");
  compare_command->add_option("--csv", compare_args->csv, "also write the summary to this CSV file");
  add_db_option(*compare_command, compare_args->db);

  auto export_args = std::make_shared<ExportArgs>();
  CLI::App* export_command = runs->add_subcommand("export", "every metric point of a run");
  export_command->add_option("ID", export_args->id, "run id")->required();
  export_command->add_option("--format", export_args->format, "csv or jsonl")
      ->check(CLI::IsMember({"csv", "jsonl"}))
      ->capture_default_str();
  export_command->add_option("--out", export_args->out, "write here instead of stdout");
  add_db_option(*export_command, export_args->db);

  return {
      {list,
       [list_db] {
         core::TrackingReader reader = open_tracking_reader(*list_db);
         std::cout << core::format_runs_table(reader.list_runs());
         return 0;
       }},
      {show_command, [show_args] { return show(*show_args); }},
      {compare_command, [compare_args] { return compare(*compare_args); }},
      {export_command, [export_args] { return export_metrics(*export_args); }},
      add_runs_follow_command(*runs),
  };
}

}  // namespace rlwb::app
