// The editor's live validation without the GUI: a check is the CLI's
// (load_experiment_text + validate_experiment) run in this process, load
// errors are issues with lines, results are tagged with their version, and
// the catalog a file implies when no --catalog is given.
#include "ui/graph/validator_client.h"
#include "core/validate/validator.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <thread>

#include "ui/graph/editor_catalog.h"
#include "tests/ui/ui_test_support.h"

namespace rlwb::ui {
namespace {

std::string demo_text() { return test::read_bytes(test::source_path("experiments/demo.yaml")); }

// demo.yaml's calls, as a catalog a user would pass with --catalog.
core::MethodCatalog demo_catalog() {
  return catalog_from_json(R"({"role_methods": {"demo": ["square", "negate", "global_sum"]},
    "builtins": ["add", "column_means"], "task_columns": {"toy_numbers": ["x", "prompts"]},
    "machine_cpu_workers": 8})");
}

// demo.yaml with `from` replaced by `to` (once).
std::string demo_with(const std::string& from, const std::string& to) {
  std::string text = demo_text();
  const size_t at = text.find(from);
  EXPECT_NE(at, std::string::npos) << from;
  return at == std::string::npos ? text : text.replace(at, from.size(), to);
}

std::string dump(const std::vector<core::GraphIssue>& issues) {
  std::string out;
  for (const auto& issue : issues) out += issue.to_string() + "\n";
  return out;
}

int line_of(const std::string& text, const std::string& needle) {
  const size_t at = text.find(needle);
  return at == std::string::npos ? 0 : 1 + int(std::count(text.begin(), text.begin() + at, '\n'));
}

// Calls update() as the frame loop does until the client has caught up.
void run_until_settled(ValidatorClient& client, uint64_t version, const std::string& text) {
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(30);
  do {
    client.update(version, text, "demo.yaml");
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  } while (!client.settled() && std::chrono::steady_clock::now() < deadline);
}

TEST(ValidateText, AnUnknownMethodIsAnIssueOnItsNodeAndLine) {
  const std::string text = demo_with("squarer.global_sum", "squarer.global_summ");
  auto issues = validate_text(text, "demo.yaml", demo_catalog());
  ASSERT_EQ(issues.size(), 1u) << dump(issues);
  EXPECT_EQ(issues[0].file, "demo.yaml");
  EXPECT_EQ(issues[0].node, "global");
  EXPECT_EQ(issues[0].line, line_of(text, "squarer.global_summ"));
  EXPECT_NE(issues[0].message.find("has no method 'global_summ'"), std::string::npos) << issues[0].message;
  EXPECT_EQ(dump(validate_text(demo_text(), "demo.yaml", demo_catalog())), "");
}

TEST(ValidateText, ACatalogFileWithPortsChecksTheNodesBindings) {
  const core::MethodCatalog catalog = catalog_from_json(R"({"role_methods": {"demo": {
      "square": {"in": [{"name": "x", "required": true}], "out": ["x_sq"]},
      "negate": {"in": ["x"], "out": ["x_neg"]},
      "global_sum": {"in": [{"name": "x", "required": true, "doc": "numbers"}], "out": ["total"]}}},
    "builtins": {"add": {"any_in": true, "out": ["sum"]}, "column_means": {"any_in": true}},
    "task_columns": {"toy_numbers": ["x", "prompts"]}, "machine_cpu_workers": 8})");
  EXPECT_EQ(dump(validate_text(demo_text(), "demo.yaml", catalog)), "");
  const std::string text = demo_with("in: {x: total}", "in: {xs: total}");
  auto issues = validate_text(text, "demo.yaml", catalog);
  ASSERT_EQ(issues.size(), 2u) << dump(issues);
  EXPECT_EQ(issues[0].message, "'squarer.global_sum' has no input port 'xs'");
  EXPECT_EQ(issues[1].message,
            "'squarer.global_sum' needs input port 'x' (numbers), which the node does not bind");
}

TEST(ValidateText, AFileThatDoesNotLoadGivesTheLoadersIssuesWithTheirLines) {
  const std::string text = demo_with("  steps: 3", "  steps: [3");
  auto issues = validate_text(text, "demo.yaml", demo_catalog());
  ASSERT_FALSE(issues.empty());
  EXPECT_EQ(issues[0].severity, core::Severity::error);
  EXPECT_GT(issues[0].line, 0) << issues[0].to_string();
}

TEST(ValidatorClient, ChecksTheNewestVersionInTheBackgroundAndTagsItsIssues) {
  ValidatorClient client;
  client.update(1, demo_text(), "demo.yaml");
  EXPECT_EQ(client.state(), ValidatorClient::State::idle);  // no catalog yet: nothing checked
  client.reset(std::make_shared<const core::MethodCatalog>(demo_catalog()));
  const std::string bad = demo_with("squarer.square", "squarer.nope");
  run_until_settled(client, 1, bad);
  EXPECT_EQ(client.state(), ValidatorClient::State::done);
  EXPECT_EQ(client.checked_version(), 1u);
  ASSERT_EQ(client.issues().size(), 1u) << dump(client.issues());
  EXPECT_EQ(client.issues()[0].node, "square");
  // Fixed: the next version's check has no issues.
  run_until_settled(client, 2, demo_text());
  EXPECT_EQ(client.checked_version(), 2u);
  EXPECT_TRUE(client.issues().empty());
  // A new document starts its versions over: reset() forgets what was checked.
  client.reset(std::make_shared<const core::MethodCatalog>(demo_catalog()));
  EXPECT_FALSE(client.settled());
  run_until_settled(client, 2, bad);
  EXPECT_EQ(client.issues().size(), 1u);
}

TEST(ValidatorClient, AnEditWithinThePauseIsCheckedOnceNotPerKey) {
  ValidatorClient client;
  client.reset(std::make_shared<const core::MethodCatalog>(demo_catalog()));
  // Versions 1..5 arrive faster than the pause: none is checked yet.
  for (uint64_t v = 1; v <= 5; ++v) client.update(v, demo_text(), "demo.yaml");
  EXPECT_EQ(client.state(), ValidatorClient::State::idle);
  run_until_settled(client, 5, demo_text());
  EXPECT_EQ(client.checked_version(), 5u);
}

TEST(CatalogFromCalls, TheFileItselfIsValidAndACallItDidNotMakeIsNot) {
  const core::Experiment exp = core::load_experiment_text(demo_text(), "demo.yaml");
  const core::MethodCatalog implied = catalog_from_calls(exp);
  auto names = [](const core::MethodPorts& methods) {
    std::set<std::string> out;
    for (const auto& [name, ports] : methods) {
      out.insert(name);
      EXPECT_FALSE(ports.known) << name << ": the file does not say what its callees' ports are";
    }
    return out;
  };
  EXPECT_EQ(names(implied.role_methods.at("demo")),
            (std::set<std::string>{"square", "negate", "global_sum"}));
  EXPECT_EQ(names(implied.builtins), (std::set<std::string>{"add", "column_means"}));
  EXPECT_EQ(implied.task_columns.at("toy_numbers"), std::vector<std::string>{"x"});
  EXPECT_EQ(dump(validate_text(demo_text(), "demo.yaml", implied)), "");
  auto issues = validate_text(demo_with("squarer.square", "squarer.nope"), "demo.yaml", implied);
  ASSERT_EQ(issues.size(), 1u) << dump(issues);
  EXPECT_EQ(issues[0].node, "square");
}

}  // namespace
}  // namespace rlwb::ui
