// A graph file built on others (`defaults:`): how the bases merge (maps key
// by key, scalars and lists replaced, null removes, a map over a node list
// edits nodes by id), where each key's line points (the file it was written
// in), overrides after the merge, saving the resolved file, and the errors
// for a missing base, a base that is not a map and a cycle.
#include <gmock/gmock.h>

#include <filesystem>

#include "tests/core/graph/graph_test_support.h"
#include "core/validate/validator.h"
#include "core/config/experiment_options.h"
#include "tests/test_files.h"

namespace rlwb::core {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using testing::issue_with;
using testing::test_catalog;

// Its line numbers are referred to below.
constexpr const char* kBase = R"(name: base
seed: 3
pools:
  main: {workers: 2}
models:
  actor:
    role: actor
    pool: main
    parallel: {dp: 2}
    config: {seed: 1, model: {num_layers: 2}, tokenizer: char}
task: {name: arithmetic, batch_size: 8}
trainer:
  steps: 3
  eval:
    score: eval_scores
    nodes:
      - {id: eval_gen, call: actor.generate, in: [prompts], out: [eval_text]}
      - {id: eval_score, call: actor.compute_log_prob, in: [eval_text], out: [eval_scores]}
nodes:
  - {id: gen, call: actor.generate, in: [prompts], out: [responses]}
  - {id: logp, call: actor.compute_log_prob, in: [prompts, responses], out: [log_probs]}
  - {id: update, call: actor.update, in: [responses, log_probs], out: []}
layout:
  gen: {x: 10, y: 20}
)";

class GraphDefaults : public rlwb::testing::TempDirTest {
 protected:
  GraphDefaults() : TempDirTest("rlwb-defaults") {}
  void SetUp() override {
    TempDirTest::SetUp();
    write("base.yaml", kBase);
  }
  std::string write(const std::string& name, const std::string& text) {
    std::filesystem::create_directories((dir_ / name).parent_path());
    rlwb::testing::write_bytes(path(name), text);
    return path(name);
  }
  Experiment load(const std::string& name, const std::vector<std::string>& overrides = {}) {
    return load_experiment_file(path(name), overrides);
  }
  std::vector<GraphIssue> issues_of(const std::string& name) {
    try {
      load(name);
    } catch (const GraphError& e) {
      return e.issues();
    }
    ADD_FAILURE() << "expected a GraphError";
    return {};
  }
  std::vector<std::string> node_ids(const std::vector<NodeSpec>& nodes) {
    std::vector<std::string> ids;
    for (const auto& node : nodes) ids.push_back(node.id);
    return ids;
  }
};

TEST_F(GraphDefaults, TheBaseIsValid) {
  auto issues = validate_experiment(load("base.yaml"), test_catalog());
  for (const auto& issue : issues) ADD_FAILURE() << issue.to_string();
}

TEST_F(GraphDefaults, MapsMergeKeyByKeyAndScalarsAndListsReplace) {
  write("exp.yaml", R"(defaults: [base.yaml]
name: child
models:
  actor:
    config: {seed: 2, micro_batch_size: 8}
task: {batch_size: 16}
trainer: {steps: 10}
)");
  Experiment exp = load("exp.yaml");
  EXPECT_EQ(exp.name, "child");
  EXPECT_EQ(exp.seed, 3);
  EXPECT_EQ(exp.pools.at("main").workers, 2);
  const ModelSpec& actor = exp.models.at("actor");
  EXPECT_EQ(actor.role, "actor");
  EXPECT_EQ(actor.parallel.dp, 2);
  EXPECT_EQ(actor.config,
            nlohmann::json::parse(
                R"({"seed": 2, "micro_batch_size": 8, "model": {"num_layers": 2}, "tokenizer": "char"})"));
  EXPECT_EQ(exp.task, nlohmann::json::parse(R"({"name": "arithmetic", "batch_size": 16})"));
  EXPECT_EQ(config::trainer_steps(exp), 10);
  EXPECT_EQ(exp.trainer["eval"]["score"], "eval_scores");  // kept from the base
  EXPECT_EQ(node_ids(exp.nodes), (std::vector<std::string>{"gen", "logp", "update"}));
  EXPECT_FALSE(exp.raw.contains("defaults"));
  EXPECT_THAT(exp.bases, ElementsAre(path("base.yaml")));
}

TEST_F(GraphDefaults, AListReplacesTheBasesList) {
  write("exp.yaml", R"(defaults: [base.yaml]
nodes:
  - {id: gen, call: actor.generate, in: [prompts], out: [responses]}
trainer:
  eval:
    nodes:
      - {id: only, call: actor.generate, in: [prompts], out: [eval_scores]}
)");
  Experiment exp = load("exp.yaml");
  EXPECT_EQ(node_ids(exp.nodes), (std::vector<std::string>{"gen"}));
  EXPECT_EQ(node_ids(exp.phase_nodes.at("eval")), (std::vector<std::string>{"only"}));
}

TEST_F(GraphDefaults, AKeySetToNullRemovesTheBasesKey) {
  write("exp.yaml", R"(defaults: [base.yaml]
models:
  actor:
    config: {tokenizer: ~}
trainer:
  eval: ~
layout: {gen: null}
)");
  Experiment exp = load("exp.yaml");
  EXPECT_EQ(exp.models.at("actor").config,
            nlohmann::json::parse(R"({"seed": 1, "model": {"num_layers": 2}})"));
  EXPECT_FALSE(exp.trainer.contains("eval"));
  EXPECT_TRUE(exp.phase_nodes.empty());
  EXPECT_EQ(exp.layout, nlohmann::json::object());
}

TEST_F(GraphDefaults, AMapOverANodeListEditsTheNodesById) {
  write("exp.yaml", R"(defaults: [base.yaml]
nodes:
  logp: ~
  update: {in: [responses]}
  score: {call: actor.compute_log_prob, in: [responses], out: [scores]}
  extra: {call: actor.generate, in: [prompts], out: [more]}
trainer:
  eval:
    nodes:
      eval_gen: {args: {greedy: true}}
)");
  Experiment exp = load("exp.yaml");
  // New ids are appended in the order they are written.
  EXPECT_EQ(node_ids(exp.nodes), (std::vector<std::string>{"gen", "update", "score", "extra"}));
  EXPECT_EQ(exp.nodes[1].in, (std::vector<std::string>{"responses"}));
  EXPECT_EQ(exp.nodes[1].call, "actor.update");  // the rest of the node is the base's
  EXPECT_EQ(exp.nodes[2].call, "actor.compute_log_prob");
  EXPECT_EQ(exp.nodes[2].out, (std::vector<std::string>{"scores"}));
  const auto& eval = exp.phase_nodes.at("eval");
  EXPECT_EQ(node_ids(eval), (std::vector<std::string>{"eval_gen", "eval_score"}));
  EXPECT_EQ(eval[0].args, nlohmann::json::parse(R"({"greedy": true})"));
  EXPECT_EQ(eval[0].out, (std::vector<std::string>{"eval_text"}));
}

TEST_F(GraphDefaults, BasesMergeInOrderEachOverTheOneBefore) {
  write("root.yaml", "name: root\nseed: 5\ntask: {name: arithmetic, batch_size: 2}\n");
  write("more/a.yaml", "defaults: [../root.yaml]\nname: a\ntask: {batch_size: 4}\n");
  write("b.yaml", "name: b\ntrainer: {steps: 7}\n");
  write("exp.yaml", "defaults: [more/a.yaml, b.yaml]\nseed: 9\n");
  Experiment exp = load("exp.yaml");
  EXPECT_EQ(exp.name, "b");
  EXPECT_EQ(exp.seed, 9);
  EXPECT_EQ(exp.task["batch_size"], 4);
  EXPECT_EQ(config::trainer_steps(exp), 7);
  // A base's own bases come before it; paths are relative to the file that names them.
  EXPECT_THAT(exp.bases, ElementsAre(path("root.yaml"), path("more/a.yaml"), path("b.yaml")));
}

TEST_F(GraphDefaults, LinesPointIntoTheFileWhereEachKeyWasWritten) {
  write("exp.yaml", R"(defaults: [base.yaml]
trainer:
  steps: 10
nodes:
  update: {in: [responses]}
  score: {call: actor.compute_log_prob, in: [responses], out: [scores]}
)");
  Experiment exp = load("exp.yaml");
  EXPECT_EQ(exp.line_of("trainer.steps"), 3);
  EXPECT_EQ(exp.file_of("trainer.steps"), path("exp.yaml"));
  EXPECT_EQ(exp.line_of("trainer.eval.score"), 15);
  EXPECT_EQ(exp.file_of("trainer.eval.score"), path("base.yaml"));
  EXPECT_EQ(exp.line_of("models.actor.parallel.dp"), 9);
  EXPECT_EQ(exp.file_of("models.actor.parallel.dp"), path("base.yaml"));
  EXPECT_EQ(exp.line_of("nodes.0.out"), 20);  // gen, untouched
  EXPECT_EQ(exp.file_of("nodes.0.out"), path("base.yaml"));
  EXPECT_EQ(exp.nodes[0].line, 20);
  EXPECT_EQ(exp.line_of("nodes.2.in"), 5);  // update's new inputs
  EXPECT_EQ(exp.file_of("nodes.2.in"), path("exp.yaml"));
  EXPECT_EQ(exp.line_of("nodes.2.call"), 22);  // update's call, from the base
  EXPECT_EQ(exp.file_of("nodes.2.call"), path("base.yaml"));
  EXPECT_EQ(exp.line_of("nodes.3"), 6);  // the added node
  EXPECT_EQ(exp.file_of("nodes.3.call"), path("exp.yaml"));
  EXPECT_EQ(exp.nodes[3].line, 6);
}

TEST_F(GraphDefaults, IssuesAboutABasesKeysNameTheBaseFile) {
  // A wrong type in the base: the loader's issue.
  write("bad_base.yaml", "pools:\n  main: {workers: abc}\n");
  write("exp.yaml", "defaults: [bad_base.yaml]\nname: x\n");
  GraphIssue wrong = issue_with(issues_of("exp.yaml"), "'pools.main.workers' should be");
  EXPECT_EQ(wrong.file, path("bad_base.yaml"));
  EXPECT_EQ(wrong.line, 2);

  // The file renames a column a base node reads: the validator's issue is at that node.
  write("exp2.yaml", R"(defaults: [base.yaml]
nodes:
  gen: {out: [texts]}
)");
  GraphIssue unread;
  for (const auto& issue : validate_experiment(load("exp2.yaml"), test_catalog()))
    if (issue.node == "logp") unread = issue;
  EXPECT_EQ(unread.message, "reads column 'responses' that no node writes");
  EXPECT_EQ(unread.file, path("base.yaml"));
  EXPECT_EQ(unread.line, 21);
  EXPECT_THAT(unread.to_string(), HasSubstr(path("base.yaml") + ":21: node 'logp'"));
}

TEST_F(GraphDefaults, OverridesApplyAfterTheMerge) {
  write("exp.yaml", "defaults: [base.yaml]\ntrainer: {steps: 10}\n");
  Experiment exp = load("exp.yaml", {"trainer.steps=2", "nodes.gen.out=[texts]", "~layout.gen"});
  EXPECT_EQ(config::trainer_steps(exp), 2);
  EXPECT_EQ(exp.nodes[0].out, (std::vector<std::string>{"texts"}));
  EXPECT_EQ(exp.line_of("trainer.steps"), 2);
  EXPECT_EQ(exp.file_of("trainer.steps"), path("exp.yaml"));
  EXPECT_EQ(exp.file_of("nodes.0"), path("base.yaml"));
  EXPECT_EQ(exp.layout, nlohmann::json::object());
}

TEST_F(GraphDefaults, RemovingANodeByOverrideKeepsTheLinesOfTheOthers) {
  write("exp.yaml",
        "defaults: [base.yaml]\nnodes:\n  extra: {call: actor.generate, in: [prompts], out: [x]}\n");
  Experiment exp = load("exp.yaml", {"~nodes.logp"});
  EXPECT_EQ(node_ids(exp.nodes), (std::vector<std::string>{"gen", "update", "extra"}));
  EXPECT_EQ(exp.line_of("nodes.1"), 22);
  EXPECT_EQ(exp.file_of("nodes.1"), path("base.yaml"));
  EXPECT_EQ(exp.line_of("nodes.2"), 3);
  EXPECT_EQ(exp.file_of("nodes.2"), path("exp.yaml"));
}

TEST_F(GraphDefaults, SavingWritesTheResolvedFile) {
  write("exp.yaml", "defaults: [base.yaml]\nname: child\ntrainer: {steps: 10}\n");
  Experiment exp = load("exp.yaml");
  const std::string saved = experiment_to_yaml(exp);
  EXPECT_THAT(saved, ::testing::Not(HasSubstr("defaults")));
  EXPECT_EQ(exp.text, saved);  // what the tracking DB stores runs without the bases
  // Read back elsewhere, without its base, it is the same experiment.
  Experiment reloaded = load_experiment_text(saved, path("elsewhere/exp.yaml"));
  EXPECT_TRUE(same_content(exp, reloaded));
  EXPECT_TRUE(reloaded.bases.empty());
}

TEST_F(GraphDefaults, AMissingBaseIsAnErrorAtItsEntry) {
  write("exp.yaml", "name: x\ndefaults:\n  - base.yaml\n  - nowhere.yaml\n");
  auto issues = issues_of("exp.yaml");
  ASSERT_EQ(issues.size(), 1u);
  EXPECT_EQ(issues[0].file, path("exp.yaml"));
  EXPECT_EQ(issues[0].line, 4);
  EXPECT_THAT(issues[0].message, HasSubstr("cannot read the base file '" + path("nowhere.yaml") + "'"));
  EXPECT_THAT(issues[0].hint, HasSubstr("relative to the file that names them"));
}

TEST_F(GraphDefaults, ABaseThatIsNotAMapIsAnError) {
  write("list.yaml", "- a\n- b\n");
  write("exp.yaml", "name: x\ndefaults: [list.yaml]\n");
  auto issues = issues_of("exp.yaml");
  ASSERT_EQ(issues.size(), 1u);
  EXPECT_EQ(issues[0].file, path("exp.yaml"));
  EXPECT_EQ(issues[0].line, 2);
  EXPECT_EQ(issues[0].message,
            "the base file '" + path("list.yaml") + "' should be a map of sections, not a list");
}

TEST_F(GraphDefaults, ACycleIsAnErrorNamingTheChain) {
  write("a.yaml", "name: a\ndefaults: [b.yaml]\n");
  write("b.yaml", "name: b\n\ndefaults: [a.yaml]\n");
  auto issues = issues_of("a.yaml");
  ASSERT_EQ(issues.size(), 1u);
  EXPECT_EQ(issues[0].file, path("b.yaml"));
  EXPECT_EQ(issues[0].line, 3);
  EXPECT_EQ(issues[0].message, "defaults: 'a.yaml' makes a cycle: " + path("a.yaml") + " -> " +
                                   path("b.yaml") + " -> " + path("a.yaml"));

  write("self.yaml", "defaults: [./self.yaml]\n");
  EXPECT_THAT(issues_of("self.yaml")[0].message, HasSubstr("makes a cycle"));
}

TEST_F(GraphDefaults, ABaseSyntaxErrorNamesTheBaseFile) {
  write("broken.yaml", "name: x\npools: {main: {workers: 2}\n");
  write("exp.yaml", "defaults: [broken.yaml]\n");
  GraphIssue issue = issue_with(issues_of("exp.yaml"), "YAML syntax error");
  EXPECT_EQ(issue.file, path("broken.yaml"));
}

TEST_F(GraphDefaults, DefaultsMustBeAListOfFileNames) {
  write("exp.yaml", "defaults: base.yaml\n");
  GraphIssue issue = issue_with(issues_of("exp.yaml"), "'defaults' should be a list of base files");
  EXPECT_EQ(issue.line, 1);
  EXPECT_THAT(issue.hint, HasSubstr("defaults: [grpo.yaml]"));
  write("exp2.yaml", "defaults: [base.yaml, {file: x}]\n");
  EXPECT_EQ(issue_with(issues_of("exp2.yaml"), "'defaults.1' should be a file name").line, 1);
}

TEST_F(GraphDefaults, ANodeEditMustBeAMapAndRemoveANodeTheBaseHas) {
  write("exp.yaml", "defaults: [base.yaml]\nnodes:\n  gen: [a]\n  logpp: ~\n");
  auto issues = issues_of("exp.yaml");
  GraphIssue not_map = issue_with(issues, "'nodes.gen' should be a map of changes to node 'gen'");
  EXPECT_EQ(not_map.file, path("exp.yaml"));
  EXPECT_EQ(not_map.line, 3);
  GraphIssue missing = issue_with(issues, "removes node 'logpp', which the base does not have");
  EXPECT_EQ(missing.line, 4);
  EXPECT_THAT(missing.hint, HasSubstr("did you mean 'logp'?"));
}

TEST_F(GraphDefaults, AFileWithoutDefaultsKeepsItsNulls) {
  Experiment exp = load_experiment_text("trainer: {steps: 2, note: ~}\n", "exp.yaml");
  EXPECT_TRUE(exp.trainer.contains("note"));
  EXPECT_TRUE(exp.bases.empty());
  EXPECT_EQ(exp.text, "trainer: {steps: 2, note: ~}\n");
}

}  // namespace
}  // namespace rlwb::core
