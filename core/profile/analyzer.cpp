#include "core/profile/analyzer.h"

#include "core/profile/analyzer_rules.h"
#include "core/profile/profile_units.h"

#include <algorithm>
#include <set>

namespace rlwb::core::profile {

namespace {
constexpr double kMinGainShare = 0.005;  // half a percent of the step
}

int AnalysisInput::pool_workers(const std::string& pool) const {
  const nlohmann::json& pools = profile.meta.pools;
  if (pools.contains(pool) && pools[pool].is_object() && pools[pool].contains("workers") &&
      pools[pool]["workers"].is_number_integer())
    return pools[pool]["workers"].get<int>();
  int most = 0;
  for (const NodeSummary& n : nodes)
    if (n.pool == pool) most = std::max(most, n.ranks);
  return most;
}

std::vector<std::string> AnalysisInput::models_on(const std::string& pool) const {
  std::vector<std::string> models;
  for (auto& [model, settings] : profile.meta.models.items())
    if (settings.is_object() && settings.value("pool", std::string()) == pool) models.push_back(model);
  if (!models.empty()) return models;
  std::set<std::string> seen;
  for (const NodeSummary& n : nodes)
    if (n.pool == pool && n.kind == "worker" && seen.insert(n.callee()).second) models.push_back(n.callee());
  return models;
}

const nlohmann::json& settings_of(const nlohmann::json& section, const std::string& name) {
  static const nlohmann::json empty = nlohmann::json::object();
  if (!section.is_object() || !section.contains(name) || !section[name].is_object()) return empty;
  return section[name];
}

std::vector<Finding> analyze(const RunProfile& profile) {
  // The merged tree and its paths once, for every tree rule.
  AnalysisInput input{
      profile, summarize_nodes(profile), mean_step_seconds(profile), profile.merged_tree(), {}};
  input.paths = context_paths(input.tree);
  std::vector<Finding> findings;
  for (auto* rule : {&find_idle_pools, &find_straggler_ranks, &find_critical_rewards, &find_transfer_overhead,
                     &find_dispatch_overhead, &find_small_softmax, &find_copies_under_matmul,
                     &find_many_small_ops_in_generate, &find_unoverlapped_collectives, &find_pipeline_bubbles,
                     &find_oversubscribed_threads, &find_memory_headroom})
    (*rule)(input, findings);
  for (Finding& f : findings) {
    f.gain_share = input.step_s > 0 ? f.gain_s / input.step_s : 0;
    f.score = f.gain_s;
  }
  // A finding whose change would not shorten the step (e.g. a straggler off
  // the critical path) is not worth a user's time.
  std::erase_if(findings, [](const Finding& f) { return f.gain_share < kMinGainShare; });
  std::stable_sort(findings.begin(), findings.end(),
                   [](const Finding& a, const Finding& b) { return a.score > b.score; });
  return findings;
}

namespace {

// Continuation lines of a field line up under its first line.
std::string indented(const std::string& text, const std::string& indent) {
  std::string out;
  for (char c : text) {
    out += c;
    if (c == '\n') out += indent;
  }
  return out;
}

}  // namespace

std::string format_findings(const std::vector<Finding>& findings) {
  if (findings.empty()) return "no findings: none of the analyzer's rules matched this profile\n";
  std::string text;
  for (size_t i = 0; i < findings.size(); ++i) {
    const Finding& f = findings[i];
    text += std::to_string(i + 1) + ". [" + f.rule + "] " + f.title + "\n";
    text += "   expected gain: " + format_seconds(f.gain_s) + " per step (" + format_percent(f.gain_share) +
            " of the step)\n";
    text += "   evidence: " + indented(f.evidence, "             ") + "\n";
    text += "   change:   " + indented(f.change, "             ") + "\n";
    if (i + 1 < findings.size()) text += "\n";
  }
  return text;
}

}  // namespace rlwb::core::profile
