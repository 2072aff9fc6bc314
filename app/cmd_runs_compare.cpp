// rlwb runs compare ID ID... [--metrics a,b] [--at-step N] [--keys all] [--csv FILE]
// rlwb runs export ID --format csv|jsonl [--out FILE]
// Argument handling only; the work is core/tracking/run_compare.h, shared with the GUI.
#include <fstream>
#include <iostream>
#include <sstream>

#include "app/commands.h"
#include "core/tracking/run_compare.h"

namespace rlwb::app {
namespace {

int64_t parse_id(const std::string& text, const char* what) {
  try {
    size_t used = 0;
    int64_t id = std::stoll(text, &used);
    if (used == text.size()) return id;
  } catch (...) {
  }
  throw UsageError(std::string(what) + " must be a number, got '" + text + "'");
}

std::vector<std::string> split_commas(const std::string& text) {
  std::vector<std::string> parts;
  std::stringstream in(text);
  for (std::string part; std::getline(in, part, ',');)
    if (!part.empty()) parts.push_back(part);
  return parts;
}

}  // namespace

int cmd_runs_compare(const CommandLine& cl, core::TrackingReader& reader) {
  if (cl.positional.size() < 3)
    throw UsageError("runs compare needs at least two run ids, e.g. 'rlwb runs compare 3 4'");
  std::vector<int64_t> ids;
  for (size_t i = 1; i < cl.positional.size(); ++i)
    ids.push_back(parse_id(cl.positional[i], "run id"));
  std::optional<int64_t> at_step;
  if (cl.flags.count("at-step")) at_step = parse_id(cl.flag("at-step", ""), "--at-step");
  std::string keys = cl.flag("keys", "diff");
  if (keys != "diff" && keys != "all") throw UsageError("--keys takes 'diff' or 'all'");
  core::RunComparison comparison =
      core::compare_runs(reader, ids, split_commas(cl.flag("metrics", "")), at_step, keys == "all");
  std::cout << core::format_comparison(comparison);
  if (std::string csv = cl.flag("csv", ""); !csv.empty()) {
    std::ofstream out(csv, std::ios::binary);
    out << core::summary_csv(comparison.summary);
    if (!out) throw std::runtime_error("cannot write " + csv);
    std::cout << "\nsummary written to " << csv << "\n";
  }
  return 0;
}

int cmd_runs_export(const CommandLine& cl, core::TrackingReader& reader) {
  if (cl.positional.size() != 2)
    throw UsageError("runs export needs one run id, e.g. 'rlwb runs export 3 --format csv'");
  int64_t id = parse_id(cl.positional[1], "run id");
  std::string format = cl.flag("format", "csv");
  if (format != "csv" && format != "jsonl") throw UsageError("--format takes csv or jsonl");
  if (std::string path = cl.flag("out", ""); !path.empty()) {
    std::ofstream out(path, std::ios::binary);
    core::export_run_metrics(reader, id, format, out);
    if (!out) throw std::runtime_error("cannot write " + path);
    return 0;
  }
  core::export_run_metrics(reader, id, format, std::cout);
  return 0;
}

}  // namespace rlwb::app
