// chrome_trace() of profile_export.h: the step timeline in the Trace Event
// Format (the JSON object form: {"traceEvents": [...]}).
#include "core/profile/profile_export.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <set>

namespace rlwb::core::profile {

namespace {

using nlohmann::json;

constexpr int kControllerPid = 1;

// Seconds to the format's microseconds, kept to the nanosecond.
double microseconds(double seconds) { return std::round(seconds * 1e9) / 1e3; }

// The lanes (threads) of one process. Trace viewers draw the events of one
// thread as a stack of nested slices, so two events that overlap without
// nesting go to lanes of their own: "rank 0", "rank 0 (2)", ...
class Lanes {
 public:
  // `group` orders the lanes of a kind among the process's lanes.
  int lane_for(const std::string& name, int group, double start, double end) {
    for (Lane& lane : lanes_)
      if (lane.name == name && lane.free_from <= start) {
        lane.free_from = end;
        return lane.tid;
      }
    const int copies = static_cast<int>(
        std::count_if(lanes_.begin(), lanes_.end(), [&](const Lane& l) { return l.name == name; }));
    const int tid = static_cast<int>(lanes_.size()) + 1;
    lanes_.push_back({name, copies == 0 ? name : name + " (" + std::to_string(copies + 1) + ")", tid,
                      group * 1000 + copies, end});
    return tid;
  }

  void add_metadata(int pid, json& events) const {
    for (const Lane& lane : lanes_) {
      events.push_back({{"name", "thread_name"},
                        {"ph", "M"},
                        {"pid", pid},
                        {"tid", lane.tid},
                        {"args", {{"name", lane.title}}}});
      events.push_back({{"name", "thread_sort_index"},
                        {"ph", "M"},
                        {"pid", pid},
                        {"tid", lane.tid},
                        {"args", {{"sort_index", lane.sort_index}}}});
    }
  }

 private:
  struct Lane {
    std::string name, title;
    int tid = 0, sort_index = 0;
    double free_from = 0;
  };
  std::vector<Lane> lanes_;
};

enum LaneGroup { kStepsLane = 0, kCriticalLane = 1, kNodesLane = 2, kRankLanes = 10 };

struct Process {
  std::string name;
  int pid = 0;
  Lanes lanes;
};

json complete_event(const std::string& name, const std::string& category, int pid, int tid, double start_s,
                    double duration_s, json args) {
  return {{"name", name},
          {"cat", category},
          {"ph", "X"},
          {"pid", pid},
          {"tid", tid},
          {"ts", microseconds(start_s)},
          {"dur", microseconds(std::max(0.0, duration_s))},
          {"args", std::move(args)}};
}

// Controller-local nodes (builtins, rewards) and worker nodes without a pool
// go to the controller's process; a pool's nodes to the pool's.
std::map<std::string, Process> processes_of(const RunProfile& profile) {
  std::set<std::string> pools;
  for (auto& [pool, settings] : profile.meta.pools.items()) pools.insert(pool);
  for (const StepTiming& step : profile.steps)
    for (const NodeTiming& n : step.nodes)
      if (n.kind == "worker" && !n.pool.empty()) pools.insert(n.pool);
  std::map<std::string, Process> processes;
  processes[""] = Process{"controller", kControllerPid, {}};
  int pid = kControllerPid;
  for (const std::string& pool : pools) processes[pool] = Process{"pool " + pool, ++pid, {}};
  return processes;
}

}  // namespace

json chrome_trace(const RunProfile& profile) {
  std::map<std::string, Process> processes = processes_of(profile);
  Process& controller = processes.at("");
  json events = json::array();
  for (const StepTiming& step : profile.steps) {
    if (step.nodes.empty()) continue;
    double first = step.nodes.front().start, last = step.nodes.front().end;
    for (const NodeTiming& n : step.nodes) {
      first = std::min(first, n.start);
      last = std::max(last, n.end);
    }
    const std::string step_name = "step " + std::to_string(step.step);
    events.push_back(complete_event(step_name, "step", controller.pid,
                                    controller.lanes.lane_for("steps", kStepsLane, first, last), first,
                                    last - first, {{"step", step.step}, {"seconds", step.seconds}}));
    const std::set<std::string> critical(step.critical_path.begin(), step.critical_path.end());
    for (const NodeTiming& n : step.nodes) {
      const bool on_worker = n.kind == "worker" && !n.pool.empty();
      Process& process = processes.at(on_worker ? n.pool : "");
      const bool is_critical = critical.count(n.node) > 0;
      json args = {{"step", step.step},
                   {"call", n.call},
                   {"kind", n.kind},
                   {"dispatch_s", n.dispatch_s},
                   {"collect_s", n.collect_s},
                   {"slowest_compute_s", n.slowest_compute()},
                   {"rank_spread_s", n.rank_spread()},
                   {"overhead_s", n.overhead()},
                   {"critical", is_critical}};
      events.push_back(complete_event(n.node, n.kind, process.pid,
                                      process.lanes.lane_for("nodes", kNodesLane, n.start, n.end), n.start,
                                      n.wall(), args));
      if (is_critical)
        events.push_back(
            complete_event(n.node, "critical", controller.pid,
                           controller.lanes.lane_for("critical path", kCriticalLane, n.start, n.end), n.start,
                           n.wall(), {{"step", step.step}, {"pool", n.pool}}));
      if (!on_worker) continue;  // a local node's one "rank" is the node itself
      for (const RankTiming& r : n.ranks) {
        const double from = n.start + n.dispatch_s, to = n.start + std::max(r.reply_s, n.dispatch_s);
        events.push_back(complete_event(
            n.node, "rank", process.pid,
            process.lanes.lane_for("rank " + std::to_string(r.rank), kRankLanes + r.rank, from, to), from,
            to - from,
            {{"step", step.step},
             {"rank", r.rank},
             {"compute_s", r.compute_s},
             {"reply_s", r.reply_s},
             {"rows", r.rows}}));
      }
    }
  }
  // profile.trace: each worker's operators, on the steps' clock, in a
  // process of its own with one lane per nesting depth.
  int pid = static_cast<int>(processes.size());
  for (const WorkerTrace& trace : profile.traces) {
    Process& process = processes["operators " + trace.worker];
    if (process.pid == 0) process = Process{"worker " + trace.worker + " operators", ++pid, {}};
    for (const TraceEvent& e : trace.events) {
      const double start = (e.start_us - profile.meta.clock_origin_us) * 1e-6,
                   duration = e.duration_us * 1e-6;
      events.push_back(complete_event(e.name, "op", process.pid,
                                      process.lanes.lane_for("depth " + std::to_string(e.depth),
                                                             kRankLanes + e.depth, start, start + duration),
                                      start, duration, {{"depth", e.depth}}));
    }
  }
  for (auto& [pool, process] : processes) {
    events.push_back({{"name", "process_name"},
                      {"ph", "M"},
                      {"pid", process.pid},
                      {"tid", 0},
                      {"args", {{"name", process.name}}}});
    events.push_back({{"name", "process_sort_index"},
                      {"ph", "M"},
                      {"pid", process.pid},
                      {"tid", 0},
                      {"args", {{"sort_index", process.pid}}}});
    process.lanes.add_metadata(process.pid, events);
  }
  return {{"traceEvents", events},
          {"displayTimeUnit", "ms"},
          {"otherData", {{"run", profile.run}, {"source", "rlwb profile export --format chrome"}}}};
}

}  // namespace rlwb::core::profile
