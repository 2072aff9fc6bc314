#include "core/profile/run_profile.h"

#include <algorithm>
#include <map>

namespace rlwb::core::profile {

double NodeTiming::slowest_compute() const {
  double worst = 0;
  for (auto& r : ranks) worst = std::max(worst, r.compute_s);
  return worst;
}

double NodeTiming::mean_compute() const {
  if (ranks.empty()) return 0;
  double sum = 0;
  for (auto& r : ranks) sum += r.compute_s;
  return sum / ranks.size();
}

double NodeTiming::rank_spread() const {
  if (ranks.size() < 2) return 0;
  auto [lo, hi] =
      std::minmax_element(ranks.begin(), ranks.end(), [](auto& a, auto& b) { return a.reply_s < b.reply_s; });
  return hi->reply_s - lo->reply_s;
}

const NodeTiming* StepTiming::find(const std::string& node) const {
  for (auto& n : nodes)
    if (n.node == node) return &n;
  return nullptr;
}

std::vector<std::string> critical_path(const std::vector<NodeTiming>& nodes) {
  std::map<std::string, const NodeTiming*> by_id;
  for (auto& n : nodes) by_id[n.node] = &n;
  const NodeTiming* at = nullptr;
  for (auto& n : nodes)
    if (!at || n.end > at->end) at = &n;
  std::vector<std::string> path;
  while (at && path.size() <= nodes.size()) {  // the bound keeps a malformed cycle finite
    path.push_back(at->node);
    const NodeTiming* before = nullptr;
    for (auto& dep : at->after)
      if (auto it = by_id.find(dep); it != by_id.end() && (!before || it->second->end > before->end))
        before = it->second;
    at = before;
  }
  std::reverse(path.begin(), path.end());
  return path;
}

ContextTree RunProfile::merged_tree(const std::string& worker) const {
  ContextTree all;
  for (auto& w : workers)
    if (w.worker.rfind(worker, 0) == 0) all.merge(w.tree);
  return all;
}

nlohmann::json to_json(const RankTiming& r) {
  return {{"rank", r.rank}, {"compute_s", r.compute_s}, {"reply_s", r.reply_s}, {"rows", r.rows}};
}

nlohmann::json to_json(const NodeTiming& n) {
  nlohmann::json ranks = nlohmann::json::array();
  for (auto& r : n.ranks) ranks.push_back(to_json(r));
  return {{"node", n.node},
          {"call", n.call},
          {"kind", n.kind},
          {"pool", n.pool},
          {"start", n.start},
          {"end", n.end},
          {"dispatch_s", n.dispatch_s},
          {"collect_s", n.collect_s},
          {"ranks", ranks},
          {"after", n.after}};
}

nlohmann::json to_json(const StepTiming& s) {
  nlohmann::json nodes = nlohmann::json::array();
  for (auto& n : s.nodes) nodes.push_back(to_json(n));
  return {{"step", s.step}, {"seconds", s.seconds}, {"nodes", nodes}, {"critical_path", s.critical_path}};
}

nlohmann::json to_json(const WorkerWindow& w) {
  return {{"worker", w.worker},
          {"host", w.host},
          {"pid", w.pid},
          {"first_step", w.first_step},
          {"last_step", w.last_step},
          {"intra_op_threads", w.intra_op_threads},
          {"peak_bytes", w.peak_bytes},
          {"memory_limit_bytes", w.memory_limit_bytes},
          {"rss_peak_bytes", w.rss_peak_bytes},
          {"notes", w.notes},
          {"tree", w.tree.to_json()}};
}

nlohmann::json to_json(const ProfileMeta& m) {
  return {{"schema", m.schema}, {"first_step", m.first_step}, {"last_step", m.last_step},
          {"window", m.window}, {"shapes", m.shapes},         {"native_stacks", m.native_stacks},
          {"trace", m.trace},   {"host_cores", m.host_cores}, {"clock_origin_us", m.clock_origin_us},
          {"pools", m.pools},   {"models", m.models},         {"rewards", m.rewards}};
}

namespace {

template <typename Fn>
auto read_or_explain(const char* what, Fn&& fn) {
  try {
    return fn();
  } catch (const nlohmann::json::exception& e) {
    throw ProfileError(std::string("profile ") + what + " is malformed: " + e.what());
  }
}

}  // namespace

StepTiming step_timing_from_json(const nlohmann::json& j) {
  return read_or_explain("step", [&] {
    StepTiming s;
    s.step = j.at("step").get<int64_t>();
    s.seconds = j.at("seconds").get<double>();
    for (auto& nj : j.at("nodes")) {
      NodeTiming n;
      n.node = nj.at("node").get<std::string>();
      n.call = nj.value("call", "");
      n.kind = nj.value("kind", "");
      n.pool = nj.value("pool", "");
      n.start = nj.at("start").get<double>();
      n.end = nj.at("end").get<double>();
      n.dispatch_s = nj.value("dispatch_s", 0.0);
      n.collect_s = nj.value("collect_s", 0.0);
      for (auto& rj : nj.value("ranks", nlohmann::json::array()))
        n.ranks.push_back({rj.at("rank").get<int>(), rj.at("compute_s").get<double>(),
                           rj.value("reply_s", 0.0), rj.value("rows", int64_t{0})});
      n.after = nj.value("after", std::vector<std::string>{});
      s.nodes.push_back(std::move(n));
    }
    s.critical_path = j.value("critical_path", std::vector<std::string>{});
    return s;
  });
}

WorkerWindow worker_window_from_json(const nlohmann::json& j) {
  WorkerWindow w = read_or_explain("worker window", [&] {
    WorkerWindow w;
    w.worker = j.at("worker").get<std::string>();
    w.host = j.value("host", "");
    w.pid = j.value("pid", 0);
    w.first_step = j.at("first_step").get<int64_t>();
    w.last_step = j.at("last_step").get<int64_t>();
    w.intra_op_threads = j.value("intra_op_threads", 0);
    w.peak_bytes = j.value("peak_bytes", int64_t{0});
    // Absent in profiles stored before they were measured: unknown.
    w.memory_limit_bytes = j.value("memory_limit_bytes", int64_t{0});
    w.rss_peak_bytes = j.value("rss_peak_bytes", int64_t{0});
    w.notes = j.value("notes", std::vector<std::string>{});
    return w;
  });
  try {
    w.tree = ContextTree::from_json(j.at("tree"));
  } catch (const std::exception& e) {
    throw ProfileError("worker " + w.worker + ": " + e.what());
  }
  return w;
}

WorkerTrace worker_trace_from_json(const std::string& worker, const nlohmann::json& j) {
  return read_or_explain("trace", [&] {
    WorkerTrace t;
    t.worker = worker;
    t.first_step = j.at("first_step").get<int64_t>();
    t.last_step = j.at("last_step").get<int64_t>();
    for (const auto& e : j.at("events"))
      t.events.push_back(
          {e.at(0).get<std::string>(), e.at(1).get<double>(), e.at(2).get<double>(), e.at(3).get<int>()});
    return t;
  });
}

ProfileMeta profile_meta_from_json(const nlohmann::json& j) {
  return read_or_explain("settings", [&] {
    ProfileMeta m;
    m.schema = j.at("schema").get<int>();
    m.first_step = j.value("first_step", int64_t{1});
    m.last_step = j.value("last_step", int64_t{0});
    m.window = j.value("window", int64_t{0});
    m.shapes = j.value("shapes", true);
    m.native_stacks = j.value("native_stacks", false);
    m.trace = j.value("trace", false);
    m.host_cores = j.value("host_cores", 0);
    m.clock_origin_us = j.value("clock_origin_us", 0.0);
    m.pools = j.value("pools", nlohmann::json::object());
    m.models = j.value("models", nlohmann::json::object());
    m.rewards = j.value("rewards", nlohmann::json::object());
    return m;
  });
}

}  // namespace rlwb::core::profile
