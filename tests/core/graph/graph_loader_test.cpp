// Loading graph files: every field into the structs, YAML scalars by the core
// schema, syntax errors and wrong types as issues with lines and hints.
#include <gmock/gmock.h>

#include <cmath>

#include "tests/core/graph/graph_test_support.h"
#include "core/config/experiment_options.h"

namespace rlwb::core {
namespace {

using testing::fixture_path;
using ::testing::HasSubstr;
using testing::issue_with;
using testing::load_issues;
using testing::read_fixture;

TEST(GraphLoader, LoadsEveryFieldOfTheGoodFixture) {
  Experiment exp = load_experiment_file(fixture_path("grpo_good.yaml"));
  EXPECT_EQ(exp.file, fixture_path("grpo_good.yaml"));
  EXPECT_EQ(exp.name, "grpo_arithmetic");
  EXPECT_EQ(exp.algorithm, "grpo");
  EXPECT_EQ(exp.seed, 7);

  ASSERT_EQ(exp.pools.size(), 2u);
  EXPECT_EQ(exp.pools.at("main"), (PoolSpec{"main", 2, "cpu"}));
  EXPECT_EQ(exp.pools.at("scorers"), (PoolSpec{"scorers", 1, "cpu"}));

  ASSERT_EQ(exp.models.size(), 2u);
  const ModelSpec& actor = exp.models.at("actor");
  EXPECT_EQ(actor.role, "actor");
  EXPECT_EQ(actor.pool, "main");
  EXPECT_EQ(actor.parallel, (ParallelSpec{2, 1, 1}));
  EXPECT_EQ(actor.config["hidden"], 64);
  EXPECT_DOUBLE_EQ(actor.config["lr"].get<double>(), 1.0e-4);
  EXPECT_EQ(actor.config["name"], "tiny");
  EXPECT_EQ(exp.models.at("ref").parallel, (ParallelSpec{2, 1, 1}));  // tp, pp default to 1
  EXPECT_EQ(exp.models.at("ref").config, nlohmann::json::object());

  ASSERT_EQ(exp.rewards.size(), 1u);
  EXPECT_EQ(exp.rewards.at("math").type, "math");
  EXPECT_EQ(exp.rewards.at("math").config["strict"], true);

  EXPECT_EQ(exp.task["name"], "arithmetic");
  EXPECT_EQ(exp.task["group_size"], 4);
  EXPECT_EQ(config::trainer_steps(exp), 3);
  EXPECT_DOUBLE_EQ(exp.trainer["kl_coef"].get<double>(), 0.001);

  ASSERT_EQ(exp.nodes.size(), 6u);
  const NodeSpec& ref = exp.nodes[1];
  EXPECT_EQ(ref.id, "ref");
  EXPECT_EQ(ref.call, "ref.compute_ref_log_prob");
  EXPECT_EQ(ref.target, "ref");
  EXPECT_EQ(ref.method, "compute_ref_log_prob");
  EXPECT_EQ(ref.in, (std::vector<std::string>{"prompts", "responses"}));
  EXPECT_EQ(ref.out, (std::vector<std::string>{"ref_log_probs"}));
  EXPECT_EQ(ref.line, 37);
  EXPECT_EQ(exp.nodes[2].line, 41);  // a flow-style node
  EXPECT_EQ(exp.nodes[4].target, "builtin");
  EXPECT_EQ(exp.nodes[4].method, "grpo_advantage");

  EXPECT_EQ(exp.layout["ref"]["y"], 40.5);
  EXPECT_EQ(exp.raw["task"]["batch_size"], 8);
  EXPECT_EQ(exp.raw["nodes"][0]["id"], "gen");
  EXPECT_EQ(exp.text, read_fixture("grpo_good.yaml"));  // no overrides: the file as written
}

TEST(GraphLoader, RecordsTheLineOfEveryKey) {
  Experiment exp = load_experiment_file(fixture_path("grpo_good.yaml"));
  EXPECT_EQ(exp.line_of("pools.scorers.workers"), 9);
  EXPECT_EQ(exp.line_of("models.actor.parallel.dp"), 15);
  EXPECT_EQ(exp.line_of("trainer.steps"), 30);
  EXPECT_EQ(exp.line_of("nodes.5.in"), 52);
  EXPECT_EQ(exp.line_of("nodes.5.in.3"), 52);
  // A key that is not in the file: its nearest ancestor's line.
  EXPECT_EQ(exp.line_of("models.ref.parallel.tp"), 20);
  EXPECT_EQ(exp.line_of("nowhere"), 0);
}

TEST(GraphLoader, ScalarsFollowTheYamlCoreSchema) {
  Experiment exp = load_experiment_text(R"(trainer:
  int: 12
  negative: -3
  hex: 0x1f
  float: 0.5
  exponent: 1e-3
  whole_float: 2.0
  infinity: -.inf
  yes_is_text: yes
  bool: true
  nothing: null
  empty:
  tilde: ~
  quoted_number: "5"
  single_quoted_bool: 'true'
  text: hello world
  list: [1, two, 3.0]
)",
                                        "exp.yaml");
  const auto& t = exp.trainer;
  EXPECT_TRUE(t["int"].is_number_integer());
  EXPECT_EQ(t["int"], 12);
  EXPECT_EQ(t["negative"], -3);
  EXPECT_EQ(t["hex"], 31);
  EXPECT_TRUE(t["float"].is_number_float());
  EXPECT_EQ(t["float"], 0.5);
  EXPECT_DOUBLE_EQ(t["exponent"].get<double>(), 0.001);
  EXPECT_TRUE(t["whole_float"].is_number_float());
  EXPECT_TRUE(std::isinf(t["infinity"].get<double>()));
  EXPECT_EQ(t["yes_is_text"], "yes");
  EXPECT_EQ(t["bool"], true);
  EXPECT_TRUE(t["nothing"].is_null());
  EXPECT_TRUE(t["empty"].is_null());
  EXPECT_TRUE(t["tilde"].is_null());
  EXPECT_EQ(t["quoted_number"], "5");
  EXPECT_EQ(t["single_quoted_bool"], "true");
  EXPECT_EQ(t["text"], "hello world");
  EXPECT_EQ(t["list"], nlohmann::json::parse(R"([1, "two", 3.0])"));
}

TEST(GraphLoader, SyntaxErrorNamesTheFileAndLine) {
  auto issues = load_issues("name: x\npools:\n  main: {workers: 2\nnodes: []\n");
  ASSERT_EQ(issues.size(), 1u);
  EXPECT_EQ(issues[0].file, "exp.yaml");
  EXPECT_GE(issues[0].line, 3);
  EXPECT_LE(issues[0].line, 4);
  EXPECT_THAT(issues[0].message, HasSubstr("YAML syntax error"));
  EXPECT_FALSE(issues[0].hint.empty());
  EXPECT_THAT(issues[0].to_string(), HasSubstr("exp.yaml:"));
}

TEST(GraphLoader, BadIndentationIsASyntaxErrorWithLine) {
  auto issues = load_issues("name: x\ntrainer:\n  steps: 1\n lr: 2\n");
  ASSERT_EQ(issues.size(), 1u);
  EXPECT_EQ(issues[0].line, 4);
}

TEST(GraphLoader, NodesThatAreNotAListAreAnIssueWithLine) {
  auto issues = load_issues("name: x\nnodes:\n  gen: {call: actor.generate}\n");
  GraphIssue issue = issue_with(issues, "'nodes' should be a list");
  EXPECT_EQ(issue.line, 2);
  EXPECT_THAT(issue.message, HasSubstr("not a map"));
  EXPECT_THAT(issue.hint, HasSubstr("- "));
}

TEST(GraphLoader, InputsThatAreNotAListSuggestTheListForm) {
  auto issues =
      load_issues("nodes:\n  - id: gen\n    call: actor.generate\n    in: prompts\n    out: [responses]\n");
  GraphIssue issue = issue_with(issues, "'nodes.0.in' should be a list of column names");
  EXPECT_EQ(issue.line, 4);
  EXPECT_THAT(issue.message, HasSubstr("text 'prompts'"));
  EXPECT_THAT(issue.hint, HasSubstr("in: [prompts]"));
}

TEST(GraphLoader, AListBindsEachColumnToThePortOfItsName) {
  Experiment exp = load_experiment_text(
      "nodes:\n  - {id: gen, call: actor.generate, in: [prompts], out: [responses, response_mask]}\n",
      "exp.yaml");
  const NodeSpec& gen = exp.nodes.at(0);
  EXPECT_EQ(gen.out, (std::vector<std::string>{"responses", "response_mask"}));
  EXPECT_TRUE(gen.in_ports.empty());
  EXPECT_EQ(gen.in_port(0), "prompts");
  EXPECT_EQ(gen.out_port(1), "response_mask");
}

TEST(GraphLoader, AMapBindsPortsToColumnsOfOtherNames) {
  Experiment exp = load_experiment_text(
      "nodes:\n  - {id: b, call: math.score, in: {response_text: greedy_text, ground_truth: ground_truth},\n"
      "     out: {token_level_scores: baseline_scores}}\n",
      "exp.yaml");
  const NodeSpec& b = exp.nodes.at(0);
  // The columns (what the runner waits for), in the map's order, each with its port.
  EXPECT_EQ(b.in, (std::vector<std::string>{"ground_truth", "greedy_text"}));
  EXPECT_EQ(b.in_ports, (std::vector<std::string>{"ground_truth", "response_text"}));
  EXPECT_EQ(b.out, (std::vector<std::string>{"baseline_scores"}));
  EXPECT_EQ(b.out_port(0), "token_level_scores");
}

TEST(GraphLoader, APortMappedToSomethingOtherThanAColumnNameIsAnIssue) {
  auto issues = load_issues("nodes:\n  - id: b\n    call: m.f\n    in: {x: [a, b]}\n");
  GraphIssue issue = issue_with(issues, "'nodes.0.in.x' should be a column name");
  EXPECT_EQ(issue.line, 4);
  issues = load_issues("nodes:\n  - id: b\n    call: m.f\n    in: [a, {x: b}]\n");
  EXPECT_THAT(issue_with(issues, "'nodes.0.in.1' should be a column name").hint,
              HasSubstr("write the whole in as a map {port: column, ...}"));
}

TEST(GraphLoader, WorkersThatAreTextAreAnIssueWithLine) {
  auto issues = load_issues("pools:\n  main:\n    workers: abc\n");
  GraphIssue issue = issue_with(issues, "'pools.main.workers' should be a whole number");
  EXPECT_EQ(issue.line, 3);
  EXPECT_THAT(issue.message, HasSubstr("text 'abc'"));
  EXPECT_THAT(issue.hint, HasSubstr("workers: 2"));
}

TEST(GraphLoader, ReadsAPoolsThreadsPerWorkerOneWhenUnwritten) {
  Experiment exp =
      load_experiment_text("pools:\n  a: {workers: 1, threads: 2}\n  b: {workers: 2}\n", "x.yaml");
  EXPECT_EQ(exp.pools.at("a").threads, 2);
  EXPECT_EQ(exp.pools.at("b").threads, 1);
  GraphIssue issue = issue_with(load_issues("pools:\n  main:\n    threads: two\n"),
                                "'pools.main.threads' should be a whole number");
  EXPECT_EQ(issue.line, 3);
  EXPECT_THAT(issue.hint, HasSubstr("threads: 2"));
}

TEST(GraphLoader, ReadsAGenerationLayoutBesideAFlatOrANestedTrainingLayout) {
  auto parallel_of = [](const std::string& parallel) {
    return load_experiment_text("models:\n  actor: {role: actor, parallel: " + parallel + "}\n", "x.yaml")
        .models.at("actor")
        .parallel;
  };
  const ParallelSpec flat = parallel_of("{dp: 2, tp: 4, generate: {tp: 2}}");
  EXPECT_EQ(flat, (ParallelSpec{.dp = 2, .tp = 4, .pp = 1, .generate_tp = 2}));
  EXPECT_EQ(flat.micro_dp(), 2);
  EXPECT_EQ(flat.generation_replicas(), 4);
  const ParallelSpec nested = parallel_of("{train: {dp: 2, tp: 4}, generate: {tp: 1, dp: 8}}");
  EXPECT_EQ(nested, (ParallelSpec{.dp = 2, .tp = 4, .pp = 1, .generate_tp = 1, .generate_dp = 8}));
  const ParallelSpec plain = parallel_of("{dp: 2}");
  EXPECT_FALSE(plain.has_generation_layout());
  EXPECT_EQ(plain.generation_replicas(), 2);
  // Flat keys beside train: may repeat it (a defaults: base brings them), not contradict it.
  EXPECT_EQ(parallel_of("{tp: 2, train: {tp: 2}}").tp, 2);
  auto issues = load_issues("models:\n  actor:\n    parallel:\n      dp: 2\n      train: {dp: 1, tp: 2}\n");
  GraphIssue issue = issue_with(
      issues,
      "'models.actor.parallel.dp' = 2 and 'models.actor.parallel.train.dp' = 1 both set the training layout");
  EXPECT_EQ(issue.line, 5);
  EXPECT_THAT(issue.hint, HasSubstr("once"));
  issue_with(load_issues("models:\n  actor: {parallel: {generate: {tp: two}}}\n"),
             "'models.actor.parallel.generate.tp' should be a whole number");
}

TEST(GraphLoader, ReportsEveryTypeProblemNotJustTheFirst) {
  auto issues = load_issues(R"(name: [a]
seed: 1.5
pools:
  main: {workers: 2.5, device: 3}
models:
  actor: {role: actor, pool: main, parallel: {dp: two}, config: 7}
task: arithmetic
trainer: {steps: "3"}
nodes:
  - {id: 3, call: actor.generate, in: [prompts, [x]], out: responses}
  - just text
layout: []
)");
  std::vector<std::pair<std::string, int>> expected = {
      {"'name' should be text", 1},
      {"'seed' should be a whole number", 2},
      {"'pools.main.workers' should be a whole number", 4},
      {"'pools.main.device' should be text", 4},
      {"'models.actor.parallel.dp' should be a whole number", 6},
      {"'models.actor.config' should be a map", 6},
      {"'task' should be a map", 7},
      {"'trainer.steps' should be a whole number", 8},
      {"'nodes.0.id' should be text", 10},
      {"'nodes.0.in.1' should be a column name", 10},
      {"'nodes.0.out' should be a list", 10},
      {"'nodes.1' should be a map", 11},
      {"'layout' should be a map", 12},
  };
  EXPECT_EQ(issues.size(), expected.size());
  for (const auto& [message, line] : expected) EXPECT_EQ(issue_with(issues, message).line, line) << message;
  EXPECT_THAT(issue_with(issues, "'nodes.0.id'").hint, HasSubstr("id: '3'"));
}

TEST(GraphLoader, KeyWrittenTwiceIsAnIssue) {
  auto issues = load_issues("name: a\ntrainer: {steps: 1}\nname: b\n");
  GraphIssue issue = issue_with(issues, "key 'name' is written twice (first on line 1)");
  EXPECT_EQ(issue.line, 3);
}

TEST(GraphLoader, TopLevelListIsAnIssue) {
  auto issues = load_issues("- a\n- b\n");
  EXPECT_THAT(issue_with(issues, "should be a map of sections").message, HasSubstr("a list"));
}

TEST(GraphLoader, MissingFileIsAGraphErrorNamingThePath) {
  try {
    load_experiment_file("/nonexistent/exp.yaml");
    FAIL() << "expected a GraphError";
  } catch (const GraphError& e) {
    ASSERT_EQ(e.issues().size(), 1u);
    EXPECT_EQ(e.issues()[0].file, "/nonexistent/exp.yaml");
    EXPECT_THAT(e.what(), HasSubstr("cannot read"));
  }
}

TEST(GraphLoader, EmptyTextLoadsAsAnEmptyExperiment) {
  Experiment exp = load_experiment_text("", "exp.yaml");
  EXPECT_TRUE(exp.nodes.empty());
  EXPECT_EQ(exp.raw, nlohmann::json::object());
  EXPECT_EQ(config::trainer_steps(exp), 1);
}

}  // namespace
}  // namespace rlwb::core
