// Hydra-style overrides: key.path=value, +key (add), ++key (add or set),
// ~key (remove); values read as YAML; every bad override is a GraphError.
#include <gmock/gmock.h>

#include "tests/core/graph/graph_test_support.h"
#include "core/config/experiment_options.h"

namespace rlwb::core {
namespace {

using testing::fixture_path;
using ::testing::HasSubstr;
using testing::issue_with;
using testing::load_issues;
using testing::read_fixture;

Experiment load_good(const std::vector<std::string>& overrides) {
  return load_experiment_file(fixture_path("grpo_good.yaml"), overrides);
}

TEST(GraphOverrides, ValueIsReadAsYaml) {
  Experiment exp =
      load_good({"trainer.steps=50", "trainer.kl_coef=0.1", "+models.actor.config.flag=true",
                 "task.name=gsm8k", "models.actor.config.layers=[a, b]", "models.actor.config.hidden='64'"});
  EXPECT_EQ(config::trainer_steps(exp), 50);
  EXPECT_TRUE(exp.trainer["kl_coef"].is_number_float());
  EXPECT_EQ(exp.trainer["kl_coef"], 0.1);
  EXPECT_EQ(exp.models.at("actor").config["flag"], true);
  EXPECT_EQ(exp.task["name"], "gsm8k");
  EXPECT_EQ(exp.models.at("actor").config["layers"], nlohmann::json::parse(R"(["a", "b"])"));
  EXPECT_EQ(exp.models.at("actor").config["hidden"], "64");  // quoted: text
  EXPECT_EQ(exp.raw["trainer"]["steps"], 50);
  EXPECT_EQ(exp.overrides.size(), 6u);
}

TEST(GraphOverrides, EmptyValueIsNullAndQuotedValueIsText) {
  Experiment exp = load_good({"trainer.kl_coef=", "trainer.steps=4", "+trainer.tag=\"5\""});
  EXPECT_TRUE(exp.trainer["kl_coef"].is_null());
  EXPECT_EQ(exp.trainer["tag"], "5");
}

TEST(GraphOverrides, DottedPathReachesNestedMapsAndFillsTheStructs) {
  Experiment exp = load_good({"models.actor.parallel.dp=1", "pools.main.workers=1"});
  EXPECT_EQ(exp.models.at("actor").parallel.dp, 1);
  EXPECT_EQ(exp.pools.at("main").workers, 1);
}

TEST(GraphOverrides, ListItemsAreReachedByIndexOrById) {
  Experiment exp = load_good({"nodes.1.out=[ref_lp]", "nodes.gen.out=[completions]"});
  EXPECT_EQ(exp.nodes[1].out, (std::vector<std::string>{"ref_lp"}));
  EXPECT_EQ(exp.nodes[0].out, (std::vector<std::string>{"completions"}));
}

TEST(GraphOverrides, ReplacingAMissingKeyIsAnErrorThatSuggestsPlus) {
  auto issues = load_issues(read_fixture("grpo_good.yaml"), {"trainer.stesp=5"});
  GraphIssue issue = issue_with(issues, "override 'trainer.stesp=5': 'trainer.stesp' does not exist");
  EXPECT_EQ(issue.file, "exp.yaml");
  EXPECT_THAT(issue.hint, HasSubstr("'trainer' has: kl_coef, steps"));
  EXPECT_THAT(issue.hint, HasSubstr("did you mean 'steps'?"));
  EXPECT_THAT(issue.hint, HasSubstr("+trainer.stesp=5"));
}

TEST(GraphOverrides, MissingMapOnTheWayIsAnError) {
  auto issues = load_issues(read_fixture("grpo_good.yaml"), {"models.critic.pool=main"});
  EXPECT_THAT(issue_with(issues, "'models.critic' does not exist").hint, HasSubstr("actor, ref"));
}

TEST(GraphOverrides, PlusAddsANewKeyCreatingMapsOnTheWay) {
  Experiment exp = load_good({"+trainer.lr=1e-5", "+models.critic.role=critic", "+models.critic.pool=main",
                              "+nodes.6={id: extra, call: builtin.kl_penalty}"});
  EXPECT_DOUBLE_EQ(exp.trainer["lr"].get<double>(), 1e-5);
  EXPECT_EQ(exp.models.at("critic").role, "critic");
  EXPECT_EQ(exp.models.at("critic").pool, "main");
  ASSERT_EQ(exp.nodes.size(), 7u);
  EXPECT_EQ(exp.nodes[6].id, "extra");
  EXPECT_EQ(exp.nodes[6].line, 0);  // not in the file
}

TEST(GraphOverrides, PlusOnAnExistingKeyIsAnError) {
  auto issues = load_issues(read_fixture("grpo_good.yaml"), {"+trainer.steps=5"});
  GraphIssue issue = issue_with(issues, "'trainer.steps' exists already");
  EXPECT_THAT(issue.hint, HasSubstr("trainer.steps=5"));
}

TEST(GraphOverrides, DoublePlusSetsOrAdds) {
  Experiment exp = load_good({"++trainer.steps=9", "++trainer.warmup=2"});
  EXPECT_EQ(config::trainer_steps(exp), 9);
  EXPECT_EQ(exp.trainer["warmup"], 2);
}

TEST(GraphOverrides, TildeRemovesAKey) {
  Experiment exp = load_good({"~trainer.kl_coef", "~layout"});
  EXPECT_FALSE(exp.trainer.contains("kl_coef"));
  EXPECT_FALSE(exp.raw.contains("layout"));
  EXPECT_TRUE(exp.layout.empty());
}

TEST(GraphOverrides, RemovingAListItemKeepsTheLaterItemsLines) {
  Experiment exp = load_good({"~nodes.ref"});
  ASSERT_EQ(exp.nodes.size(), 5u);
  EXPECT_EQ(exp.nodes[1].id, "old");
  EXPECT_EQ(exp.nodes[1].line, 41);
  EXPECT_EQ(exp.line_of("nodes.4.in"), 52);  // 'update', was nodes.5
}

TEST(GraphOverrides, LinesStillPointIntoTheFile) {
  Experiment exp = load_good({"trainer.steps=0", "nodes.1={id: ref2, call: ref.compute_ref_log_prob}"});
  EXPECT_EQ(exp.line_of("trainer.steps"), 30);  // the key is still on line 30
  EXPECT_EQ(exp.line_of("nodes.1"), 37);
  EXPECT_EQ(exp.line_of("nodes.1.in"), 37);  // the old node's 'in' line is gone
  EXPECT_EQ(exp.nodes[2].line, 41);
}

TEST(GraphOverrides, TextIsTheResolvedYamlAndReloadsToTheSameExperiment) {
  Experiment exp = load_good({"trainer.steps=50"});
  EXPECT_THAT(exp.text, HasSubstr("steps: 50"));
  EXPECT_EQ(exp.text, experiment_to_yaml(exp));
  Experiment again = load_experiment_text(exp.text, "resolved.yaml");
  EXPECT_TRUE(same_content(exp, again));
}

TEST(GraphOverrides, OverrideWithoutEqualsIsAGraphErrorWithAHint) {
  auto issues = load_issues(read_fixture("grpo_good.yaml"), {"trainer.steps"});
  GraphIssue issue = issue_with(issues, "override 'trainer.steps': has no '='");
  EXPECT_THAT(issue.hint, HasSubstr("key.path=value"));
  EXPECT_THAT(issue.to_string(), HasSubstr("exp.yaml: override 'trainer.steps'"));
}

TEST(GraphOverrides, EmptyKeyPartsAreAnError) {
  auto issues = load_issues("trainer: {steps: 1}\n", {"trainer..steps=1", "=3"});
  EXPECT_EQ(issue_with(issues, "empty part").hint.empty(), false);
  issue_with(issues, "no key before the '='");
}

TEST(GraphOverrides, ValueThatIsNotYamlIsAnError) {
  auto issues = load_issues("trainer: {steps: 1}\n", {"trainer.steps=[1, 2"});
  GraphIssue issue = issue_with(issues, "the value is not valid YAML");
  EXPECT_THAT(issue.hint, HasSubstr("quote"));
}

TEST(GraphOverrides, EveryBadOverrideIsReportedTogether) {
  auto issues = load_issues(read_fixture("grpo_good.yaml"),
                            {"nope", "trainer.missing=1", "nodes.9.id=x", "trainer.steps.deeper=1"});
  EXPECT_EQ(issues.size(), 4u);
  issue_with(issues, "override 'nope'");
  issue_with(issues, "'trainer.missing' does not exist");
  EXPECT_THAT(issue_with(issues, "'nodes.9' is not an item of the list (6 items)").hint,
              HasSubstr("gen, ref, old"));
  EXPECT_THAT(issue_with(issues, "'trainer.steps' is a number, not a map or list").hint,
              HasSubstr("override 'trainer.steps' as a whole"));
}

TEST(GraphOverrides, OverrideThatGivesAWrongTypeIsReportedAsATypeIssue) {
  auto issues = load_issues(read_fixture("grpo_good.yaml"), {"pools.main.workers=abc"});
  GraphIssue issue = issue_with(issues, "'pools.main.workers' should be a whole number");
  EXPECT_EQ(issue.line, 7);
}

TEST(GraphOverrides, OverridesApplyInOrder) {
  Experiment exp = load_good({"trainer.steps=5", "trainer.steps=6"});
  EXPECT_EQ(config::trainer_steps(exp), 6);
}

TEST(GraphOverrides, OverridesBuildAnExperimentFromAnEmptyText) {
  Experiment exp = load_experiment_text("", "exp.yaml", {"+name=x", "+trainer.steps=2"});
  EXPECT_EQ(exp.name, "x");
  EXPECT_EQ(config::trainer_steps(exp), 2);
}

}  // namespace
}  // namespace rlwb::core
