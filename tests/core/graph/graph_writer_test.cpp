// Saving graphs: canonical key order, flow-style column lists, values that
// read back the same, struct edits over `raw`, and a byte-stable round trip.
#include <gmock/gmock.h>

#include "tests/core/graph/graph_test_support.h"

namespace rlwb::core {
namespace {

using testing::fixture_path;
using ::testing::HasSubstr;

Experiment reload(const Experiment& exp) {
  return load_experiment_text(experiment_to_yaml(exp), "saved.yaml");
}

// Positions of `keys` in `text` (as "key:" at the start of a line with `indent`).
std::vector<std::size_t> positions(const std::string& text, const std::vector<std::string>& keys,
                                   const std::string& indent = "") {
  std::vector<std::size_t> at;
  for (const auto& key : keys) {
    std::size_t pos = text.rfind("\n" + indent + key + ":", text.size());
    if (text.rfind(indent + key + ":", 0) == 0) pos = 0;
    EXPECT_NE(pos, std::string::npos) << key;
    at.push_back(pos);
  }
  return at;
}

TEST(GraphWriter, WritesTopLevelKeysInTheCanonicalOrderThenOthers) {
  std::string yaml = experiment_to_yaml(load_experiment_file(fixture_path("shuffled.yaml")));
  auto at = positions(
      yaml, {"name", "algorithm", "pools", "models", "task", "trainer", "nodes", "layout", "notes"});
  EXPECT_TRUE(std::is_sorted(at.begin(), at.end())) << yaml;
  EXPECT_EQ(yaml.rfind("name: shuffled\nalgorithm: ppo\npools:\n", 0), 0u) << yaml;
}

TEST(GraphWriter, WritesEntityKeysInTheCanonicalOrder) {
  std::string yaml = experiment_to_yaml(load_experiment_file(fixture_path("shuffled.yaml")));
  EXPECT_THAT(yaml, HasSubstr("  main:\n    workers: 2\n    device: cpu\n    host: local\n"));
  EXPECT_THAT(yaml, HasSubstr("  actor:\n    role: actor\n    pool: main\n"
                              "    parallel: {dp: 2, pp: 1}\n    config:\n"));
  EXPECT_THAT(yaml, HasSubstr("  - id: gen\n    call: actor.generate\n"
                              "    in: [prompts]\n    out: [answer_text]\n    args:\n"));
  EXPECT_THAT(yaml, HasSubstr("task:\n  name: arithmetic\n"));
  EXPECT_THAT(yaml, HasSubstr("  update: {x: 1, y: 2}\n"));
}

TEST(GraphWriter, WritesNodeColumnsAsFlowLists) {
  std::string yaml = experiment_to_yaml(load_experiment_file(fixture_path("grpo_good.yaml")));
  EXPECT_THAT(yaml, HasSubstr("    in: [prompts, responses, old_log_probs, ref_log_probs, advantages]\n"));
  EXPECT_THAT(yaml, HasSubstr("    out: [actor_metrics]\n"));
  std::string shuffled = experiment_to_yaml(load_experiment_file(fixture_path("shuffled.yaml")));
  EXPECT_THAT(shuffled, HasSubstr("    out: []\n"));
}

TEST(GraphWriter, PortsNamedApartFromTheirColumnsAreWrittenAsAFlowMap) {
  const std::string text =
      "nodes:\n  - {id: b, call: math.score, in: [response_text, response_mask], out: {token_level_scores: "
      "s}}\n";
  Experiment exp = load_experiment_text(text, "exp.yaml");
  std::string yaml = experiment_to_yaml(exp);
  EXPECT_THAT(yaml, HasSubstr("    in: [response_text, response_mask]\n    out: {token_level_scores: s}\n"));
  Experiment again = reload(exp);
  EXPECT_TRUE(same_content(exp, again));
  EXPECT_EQ(experiment_to_yaml(again), yaml);
  // An edit in code that binds a port keeps the map form.
  exp.nodes[0].in = {"text", "response_mask"};
  exp.nodes[0].in_ports = {"response_text", "response_mask"};
  EXPECT_THAT(experiment_to_yaml(exp),
              HasSubstr("    in: {response_mask: response_mask, response_text: text}\n"));
}

TEST(GraphWriter, SavingTheSavedFileAgainGivesTheSameBytes) {
  for (const char* name : {"grpo_good.yaml", "shuffled.yaml"}) {
    Experiment original = load_experiment_file(fixture_path(name));
    std::string once = experiment_to_yaml(original);
    std::string twice = experiment_to_yaml(load_experiment_text(once, "saved.yaml"));
    EXPECT_EQ(once, twice) << name;
  }
}

TEST(GraphWriter, ReloadedExperimentEqualsTheOriginal) {
  for (const char* name : {"grpo_good.yaml", "shuffled.yaml"}) {
    Experiment original = load_experiment_file(fixture_path(name));
    Experiment again = reload(original);
    EXPECT_TRUE(same_content(original, again)) << name << "\n" << again.raw.dump(2);
    EXPECT_EQ(original.raw, again.raw) << name;
  }
}

// A pool's threads per worker: kept where the file wrote it, added after
// workers (and device) when set away from the default (1), left out of a
// pool that never had it, and read back the same.
TEST(GraphWriter, APoolsThreadsAreSavedWhenWrittenOrSet) {
  Experiment exp =
      load_experiment_text("pools:\n  a: {workers: 1, threads: 2}\n  b: {workers: 2}\n", "x.yaml");
  std::string yaml = experiment_to_yaml(exp);
  EXPECT_THAT(yaml, HasSubstr("  a:\n    workers: 1\n    threads: 2\n")) << yaml;
  EXPECT_THAT(yaml, HasSubstr("  b:\n    workers: 2\n")) << yaml;
  EXPECT_EQ(yaml.find("threads"), yaml.rfind("threads")) << "b has none: " << yaml;
  exp.pools.at("b").threads = 3;
  yaml = experiment_to_yaml(exp);
  EXPECT_THAT(yaml, HasSubstr("  b:\n    workers: 2\n    threads: 3\n")) << yaml;
  EXPECT_EQ(reload(exp).pools.at("b").threads, 3);
}

// The 3D-HybridEngine's generation layout survives a save, in the form
// the file wrote its training layout (flat or under train:).
TEST(GraphWriter, AGenerationLayoutIsSavedBesideTheTrainingLayoutItWasWrittenWith) {
  const std::string flat = R"(name: hybrid
pools:
  main: {workers: 4}
models:
  actor: {role: actor, pool: main, parallel: {dp: 1, tp: 4, pp: 1, generate: {tp: 2}}}
)";
  const std::string nested = R"(name: hybrid
pools:
  main: {workers: 4}
models:
  actor: {role: actor, pool: main, parallel: {train: {tp: 4}, generate: {tp: 1, dp: 4}}}
)";
  for (const std::string& text : {flat, nested}) {
    Experiment exp = load_experiment_text(text, "hybrid.yaml");
    const std::string yaml = experiment_to_yaml(exp);
    Experiment again = load_experiment_text(yaml, "saved.yaml");
    EXPECT_EQ(again.models.at("actor").parallel, exp.models.at("actor").parallel) << yaml;
    EXPECT_EQ(yaml.find("train:") != std::string::npos, text == nested) << yaml;
  }
  // An edit in the structs is written: the generation layout added, then removed.
  Experiment exp = load_experiment_text(flat, "hybrid.yaml");
  exp.models.at("actor").parallel.generate_tp = 1;
  EXPECT_THAT(experiment_to_yaml(exp), HasSubstr("generate: {tp: 1}"));
  exp.models.at("actor").parallel.generate_tp = 0;
  EXPECT_THAT(experiment_to_yaml(exp), ::testing::Not(HasSubstr("generate")));
}

TEST(GraphWriter, StringsThatLookLikeOtherTypesStayText) {
  Experiment original = load_experiment_file(fixture_path("shuffled.yaml"));
  Experiment again = reload(original);
  const auto& labels = again.task["labels"];
  ASSERT_EQ(labels.size(), 10u);
  for (const auto& label : labels) EXPECT_TRUE(label.is_string()) << label.dump();
  EXPECT_EQ(labels, original.task["labels"]);
  EXPECT_EQ(again.nodes[0].in, (std::vector<std::string>{"prompts"}));
  EXPECT_EQ(again.raw["nodes"][0]["args"]["stop"], original.raw["nodes"][0]["args"]["stop"]);
  EXPECT_TRUE(again.models.at("actor").config["checkpoint"].is_null());
}

TEST(GraphWriter, FloatsReadBackExactlyAndStayFloats) {
  Experiment again = reload(load_experiment_file(fixture_path("shuffled.yaml")));
  const auto& t = again.trainer;
  EXPECT_TRUE(t["total"].is_number_float());
  EXPECT_EQ(t["total"].get<double>(), 100.0);
  EXPECT_EQ(t["lr"].get<double>(), 0.1);
  EXPECT_EQ(t["tiny"].get<double>(), 1.0e-7);
  EXPECT_EQ(t["pi"].get<double>(), 3.141592653589793);
  EXPECT_EQ(t["big"].get<double>(), 1e300);
}

TEST(GraphWriter, KeysOnlyInRawAreKept) {
  Experiment again = reload(load_experiment_file(fixture_path("shuffled.yaml")));
  EXPECT_EQ(again.raw["notes"], "keep me");
  EXPECT_EQ(again.raw["pools"]["main"]["host"], "local");
  EXPECT_EQ(again.raw["models"]["actor"]["checkpoint_every"], 10);
  EXPECT_EQ(again.raw["nodes"][0]["args"]["temperature"], 0.7);
}

TEST(GraphWriter, StructEditsWinOverRaw) {
  Experiment exp = load_experiment_file(fixture_path("grpo_good.yaml"));
  exp.name = "edited";
  exp.pools.at("main").workers = 4;
  exp.models.at("actor").parallel.dp = 4;
  exp.models["critic"] = {"critic", "critic", "scorers", {1, 1, 1}, {{"lr", 1e-5}}};
  exp.rewards.erase("math");
  exp.nodes[0].out = {"completions"};
  exp.nodes.erase(exp.nodes.begin() + 2);  // 'old'
  exp.layout["adv"] = {{"x", 7}, {"y", 8}};
  Experiment again = reload(exp);
  EXPECT_EQ(again.name, "edited");
  EXPECT_EQ(again.pools.at("main").workers, 4);
  EXPECT_EQ(again.models.at("actor").parallel.dp, 4);
  EXPECT_EQ(again.models.at("critic").role, "critic");
  EXPECT_EQ(again.models.at("critic").config["lr"], 1e-5);
  EXPECT_TRUE(again.rewards.empty());
  EXPECT_EQ(again.nodes[0].out, (std::vector<std::string>{"completions"}));
  ASSERT_EQ(again.nodes.size(), 5u);
  EXPECT_EQ(again.nodes[2].id, "score");
  EXPECT_EQ(again.layout["adv"]["x"], 7);
}

TEST(GraphWriter, DefaultsTheFileDidNotHaveAreNotWritten) {
  std::string yaml = experiment_to_yaml(
      load_experiment_text("pools:\n  main: {workers: 1}\nmodels:\n  a: {role: actor, pool: main}\n"
                           "nodes:\n  - {id: g, call: a.generate}\n",
                           "exp.yaml"));
  // No seed, device, parallel, in or out: the file had none and they are defaults.
  EXPECT_EQ(yaml,
            "pools:\n  main:\n    workers: 1\nmodels:\n  a:\n    role: actor\n    pool: main\n"
            "nodes:\n  - id: g\n    call: a.generate\n");
}

TEST(GraphWriter, ExperimentBuiltInCodeSavesAndLoads) {
  Experiment exp;
  exp.name = "from_gui";
  exp.seed = 3;
  exp.pools["main"] = {"main", 2, "cuda"};
  exp.models["actor"] = {"actor", "actor", "main", {2, 1, 1}, nlohmann::json::object()};
  exp.trainer = {{"steps", 5}};
  NodeSpec gen;
  gen.id = "gen";
  gen.call = "actor.generate";
  gen.in = {"prompts"};
  gen.out = {"responses"};
  exp.nodes.push_back(gen);
  std::string yaml = experiment_to_yaml(exp);
  EXPECT_EQ(yaml,
            "name: from_gui\n"
            "seed: 3\n"
            "pools:\n"
            "  main:\n"
            "    workers: 2\n"
            "    device: cuda\n"
            "models:\n"
            "  actor:\n"
            "    role: actor\n"
            "    pool: main\n"
            "    parallel: {dp: 2}\n"
            "trainer:\n"
            "  steps: 5\n"
            "nodes:\n"
            "  - id: gen\n"
            "    call: actor.generate\n"
            "    in: [prompts]\n"
            "    out: [responses]\n");
  Experiment loaded = load_experiment_text(yaml, "saved.yaml");
  EXPECT_EQ(loaded.pools, exp.pools);
  EXPECT_EQ(loaded.models, exp.models);
  EXPECT_EQ(loaded.nodes[0].target, "actor");
  EXPECT_EQ(experiment_to_yaml(loaded), yaml);
}

}  // namespace
}  // namespace rlwb::core
