// Shared by the graph_*_test.cpp files: a method catalog like the workers'
// registry, fixture paths, and issue lookup.
#pragma once

#include <gtest/gtest.h>

#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "core/graph/experiment.h"
#include "core/validate/validator.h"
#include "tests/test_paths.h"

namespace rlwb::core::testing {

// Methods by name, their ports not declared (so not checked).
inline MethodPorts methods(std::initializer_list<const char*> names) {
  MethodPorts out;
  for (const char* name : names) out[name];
  return out;
}

// Like the workers' registry, but without ports: the graph tests that are
// not about ports bind whatever columns they like.
inline MethodCatalog test_catalog() {
  MethodCatalog catalog;
  catalog.role_methods = {{"actor", methods({"generate", "compute_log_prob", "update"})},
                          {"reference", methods({"compute_ref_log_prob"})},
                          {"critic", methods({"compute_values", "update"})},
                          {"reward_model", methods({"compute_scores"})}};
  catalog.reward_methods = {{"math", methods({"score"})}, {"code", methods({"score"})}};
  catalog.builtins = methods({"grpo_advantage", "gae_advantage", "kl_penalty"});
  catalog.task_columns = {{"arithmetic", {"prompts", "answers"}}};
  catalog.machine_gpus = 2;
  catalog.machine_cpu_workers = 8;
  return catalog;
}

inline std::string fixture_path(const std::string& name) {
  return std::string(rlwb::testing::kSourceDir) + "/tests/core/graph/graphs/" + name;
}

inline std::string read_fixture(const std::string& name) {
  std::ifstream in(fixture_path(name), std::ios::binary);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

// The issues a load throws; fails the test when it does not throw.
inline std::vector<GraphIssue> load_issues(const std::string& text,
                                           const std::vector<std::string>& overrides = {}) {
  try {
    load_experiment_text(text, "exp.yaml", overrides);
  } catch (const GraphError& e) {
    return e.issues();
  }
  ADD_FAILURE() << "expected a GraphError";
  return {};
}

inline std::vector<GraphIssue> validate_text(const std::string& text,
                                             const MethodCatalog& catalog = test_catalog()) {
  return validate_experiment(load_experiment_text(text, "exp.yaml"), catalog);
}

// `text` with the first `from` in it replaced by `to`; a test failure when
// there is none (a test that edits a graph no longer edits anything).
inline std::string edited(std::string text, const std::string& from, const std::string& to) {
  auto at = text.find(from);
  EXPECT_NE(at, std::string::npos) << "'" << from << "' is not in the graph";
  if (at != std::string::npos) text.replace(at, from.size(), to);
  return text;
}

// The one issue whose message contains `part`; fails the test unless exactly one does.
inline GraphIssue issue_with(const std::vector<GraphIssue>& issues, const std::string& part) {
  std::vector<GraphIssue> found;
  for (const auto& issue : issues)
    if (issue.message.find(part) != std::string::npos) found.push_back(issue);
  std::string all;
  for (const auto& issue : issues) all += "\n  " + issue.to_string();
  EXPECT_EQ(found.size(), 1u) << "issues with '" << part << "' among:" << all;
  return found.empty() ? GraphIssue{} : found.front();
}

}  // namespace rlwb::core::testing
