// The analyzer's rules (analyzer.h), one function each, for analyzer.cpp
// to run and for the tests to name. A rule appends its findings; it fills
// gain_s and leaves gain_share and score to analyze(). The thresholds are
// named where each rule is, with the reason for their value.
#pragma once

#include "core/profile/analyzer.h"
#include "core/profile/context_paths.h"
#include "core/profile/node_summary.h"

#include <vector>

namespace rlwb::core::profile {

// What every rule may read, computed once.
struct AnalysisInput {
  const RunProfile& profile;
  std::vector<NodeSummary> nodes;  // summarize_nodes(profile)
  double step_s = 0;               // mean_step_seconds(profile)
  ContextTree tree;                // profile.merged_tree(): every worker and window
  std::vector<ContextPath> paths;  // context_paths(tree); they point into `tree`, so never copy the input
  // Workers of `pool`: meta.pools.<pool>.workers, else the most ranks seen on it.
  int pool_workers(const std::string& pool) const;
  // The models the meta says run on `pool`, else the callees of its nodes.
  std::vector<std::string> models_on(const std::string& pool) const;
};

// The object `section[name]` of the meta (meta.models, meta.rewards), or an
// empty object when it is absent or not an object.
const nlohmann::json& settings_of(const nlohmann::json& section, const std::string& name);

// analyzer_timing_rules.cpp: from the controller's StepTimings.
void find_idle_pools(const AnalysisInput& in, std::vector<Finding>& out);
void find_straggler_ranks(const AnalysisInput& in, std::vector<Finding>& out);
void find_critical_rewards(const AnalysisInput& in, std::vector<Finding>& out);
void find_transfer_overhead(const AnalysisInput& in, std::vector<Finding>& out);
void find_dispatch_overhead(const AnalysisInput& in, std::vector<Finding>& out);
// analyzer_operator_rules.cpp: from the workers' calling-context trees.
void find_small_softmax(const AnalysisInput& in, std::vector<Finding>& out);
void find_copies_under_matmul(const AnalysisInput& in, std::vector<Finding>& out);
void find_many_small_ops_in_generate(const AnalysisInput& in, std::vector<Finding>& out);
void find_unoverlapped_collectives(const AnalysisInput& in, std::vector<Finding>& out);
void find_pipeline_bubbles(const AnalysisInput& in, std::vector<Finding>& out);
// analyzer_host_rules.cpp: from the workers' windows and the host.
void find_oversubscribed_threads(const AnalysisInput& in, std::vector<Finding>& out);
void find_memory_headroom(const AnalysisInput& in, std::vector<Finding>& out);  // near the limit, or unused

}  // namespace rlwb::core::profile
