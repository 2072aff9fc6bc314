// Machine-readable results of the benchmarks. Every benchmark prints its
// tables for a person; besides, each headline figure goes through
// record_figure(), which appends one JSON line to the file named by the
// environment variable RLWB_BENCH_RESULTS (nothing when it is unset, so a
// benchmark run by hand behaves as before). bench/run_all.sh sets it, and
// scripts/bench_table.py turns the lines into the table of current figures
// at the top of bench/RESULTS.md.
//
// A line: {"figure": key, "title", "value", "unit", "peer", "peer_value",
// "ratio": {"min", "median", "max", "pairs": [...]}, "higher_is_better",
// "goal", "met", "host_cpu", "cores", "load", "date", "commit", "command"}.
// `figure` is a stable key ("grpo_step/vs_trl"); the table keeps the
// latest line of each key. Torch-free: the sandbox, math and GUI
// benchmarks include it too.
#pragma once

#include <sched.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <fstream>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

namespace rlwb::bench {

// The CPU model as /proc/cpuinfo names it ("Intel(R) Xeon(R) Processor").
inline std::string cpu_model() {
  std::ifstream in("/proc/cpuinfo");
  for (std::string line; std::getline(in, line);)
    if (line.rfind("model name", 0) == 0) return line.substr(line.find(':') + 2);
  return "unknown CPU";
}

// The cores this process may run on, "0,1".
inline std::string allowed_cores() {
  cpu_set_t set;
  CPU_ZERO(&set);
  if (sched_getaffinity(0, sizeof set, &set) != 0) return "?";
  std::string list;
  for (int c = 0; c < CPU_SETSIZE; ++c)
    if (CPU_ISSET(c, &set)) list += (list.empty() ? "" : ",") + std::to_string(c);
  return list;
}

// The median of `v` (the upper one of an even count).
inline double median_of(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v.empty() ? 0.0 : v[v.size() / 2];
}

// `v` with `digits` decimals.
inline std::string fixed(double v, int digits = 1) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.*f", digits, v);
  return buf;
}

// One headline figure and how it compares with its peer or floor.
struct Figure {
  std::string key;    // stable id: "<benchmark>/<figure>"
  std::string title;  // what the table's first column says
  double value = 0;   // RLWB's figure (a median where there are pairs)
  std::string unit;
  std::string peer;  // "TRL 0.x best layout", "memcpy"; empty when none
  std::optional<double> peer_value;
  std::vector<double> pair_ratios;  // RLWB over the peer, one per interleaved pair
  bool higher_is_better = true;     // for the ratios: speed-ups (true) or costs (false)
  std::string goal;                 // "ratio >= 3 in every pair", empty when none
  std::optional<bool> met;
};

// Appends `f` as one JSON line to $RLWB_BENCH_RESULTS (when set).
inline void record_figure(const Figure& f) {
  const char* path = std::getenv("RLWB_BENCH_RESULTS");
  if (path == nullptr || *path == '\0') return;
  nlohmann::json line = {
      {"figure", f.key}, {"title", f.title},        {"value", f.value},
      {"unit", f.unit},  {"peer", f.peer},          {"higher_is_better", f.higher_is_better},
      {"goal", f.goal},  {"host_cpu", cpu_model()}, {"cores", allowed_cores()}};
  line["peer_value"] = f.peer_value ? nlohmann::json(*f.peer_value) : nlohmann::json();
  line["met"] = f.met ? nlohmann::json(*f.met) : nlohmann::json();
  if (!f.pair_ratios.empty()) {
    std::vector<double> sorted = f.pair_ratios;
    std::sort(sorted.begin(), sorted.end());
    line["ratio"] = {{"min", sorted.front()},
                     {"median", sorted[sorted.size() / 2]},
                     {"max", sorted.back()},
                     {"pairs", f.pair_ratios}};
  }
  double load[1] = {0};
  if (getloadavg(load, 1) == 1) line["load"] = load[0];
  char date[32];
  const std::time_t now = std::time(nullptr);
  std::strftime(date, sizeof date, "%Y-%m-%dT%H:%M:%SZ", std::gmtime(&now));
  line["date"] = date;
  const char* commit = std::getenv("RLWB_COMMIT");
  line["commit"] = commit ? commit : "";
  const char* command = std::getenv("RLWB_BENCH_COMMAND");
  line["command"] = command ? command : "";
  std::ofstream out(path, std::ios::app);
  out << line.dump() << "\n";
  if (!out) std::fprintf(stderr, "bench: cannot append to RLWB_BENCH_RESULTS=%s\n", path);
}

}  // namespace rlwb::bench
