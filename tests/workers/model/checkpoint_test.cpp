// HF-layout checkpoints written and read by RLWB, and the bad inputs that
// must fail before training starts with a message naming the file and the
// tensor or setting.
#include "workers/model/hf_checkpoint.h"

#include <gtest/gtest.h>
#include <torch/torch.h>

#include <nlohmann/json.hpp>

#include "tests/workers/model/model_test_support.h"
#include "workers/model/char_tokenizer.h"
#include "workers/model/generation.h"
#include "workers/model/model_error.h"
#include "workers/model/safetensors.h"

namespace rlwb::workers::model {
namespace {

using testing::ScratchDir;
namespace fs = std::filesystem;

Transformer saved_model(const fs::path& dir, Architecture arch = Architecture::kLlama, uint64_t seed = 1) {
  torch::manual_seed(seed);
  Transformer model(testing::tiny_config(arch));
  save_hf_checkpoint(model, dir);
  return model;
}

torch::Tensor logits_of(Transformer& model) {
  torch::NoGradGuard no_grad;
  return model->forward(torch::tensor({{1, 5, 9, 33, 2}}), torch::Tensor());
}

// Runs f, expects a ModelError whose message contains every fragment.
template <typename F>
void expect_model_error(F&& f, const std::vector<std::string>& fragments) {
  try {
    f();
    FAIL() << "no ModelError";
  } catch (const ModelError& e) {
    const std::string what = e.what();
    for (const auto& frag : fragments)
      EXPECT_NE(what.find(frag), std::string::npos) << "'" << frag << "' not in: " << what;
  }
}

void edit_config(const fs::path& dir, const std::function<void(nlohmann::json&)>& edit) {
  nlohmann::json j = nlohmann::json::parse(testing::read_file(dir / "config.json"));
  edit(j);
  testing::write_file(dir / "config.json", j.dump(2));
}

// Rewrites model.safetensors through f(name, tensor) -> keep?
void edit_tensors(const fs::path& dir, const std::function<bool(const std::string&, torch::Tensor&)>& f) {
  auto tensors = read_safetensors(dir / "model.safetensors");
  std::vector<std::pair<std::string, torch::Tensor>> kept;
  for (auto& [name, t] : tensors) {
    if (f(name, t)) kept.emplace_back(name, t);
  }
  write_safetensors(dir / "model.safetensors", kept);
}

TEST(Checkpoint, SaveThenLoadGivesTheSameModel) {
  for (Architecture arch : {Architecture::kLlama, Architecture::kQwen2}) {
    ScratchDir dir("ckpt");
    Transformer model = saved_model(dir.path(), arch);
    Transformer loaded = load_hf_checkpoint(dir.path());
    EXPECT_EQ(loaded->config().architecture, arch);
    EXPECT_EQ(loaded->config().rope_theta, 500.0);
    EXPECT_TRUE(torch::equal(logits_of(model), logits_of(loaded)));
  }
}

TEST(Checkpoint, Bfloat16CheckpointLoadsCloseToTheFloat32Model) {
  ScratchDir dir("ckpt");
  torch::manual_seed(2);
  Transformer model(testing::tiny_config());
  save_hf_checkpoint(model, dir.path(), {torch::kBFloat16});
  EXPECT_EQ(SafetensorsReader(dir.path() / "model.safetensors").entry("model.norm.weight").dtype, "BF16");
  Transformer loaded = load_hf_checkpoint(dir.path());  // converted to float32
  EXPECT_EQ(loaded->tok_embeddings->weight.scalar_type(), torch::kFloat32);
  EXPECT_TRUE(torch::allclose(logits_of(model), logits_of(loaded), 0.05, 0.05));
  LoadOptions bf16;
  bf16.dtype = torch::kBFloat16;
  Transformer in_bf16 = load_hf_checkpoint(dir.path(), bf16);
  EXPECT_EQ(in_bf16->tok_embeddings->weight.scalar_type(), torch::kBFloat16);
}

TEST(Checkpoint, ShardedCheckpointLoadsThroughItsIndex) {
  ScratchDir dir("ckpt");
  Transformer model = saved_model(dir.path());
  auto tensors = read_safetensors(dir.path() / "model.safetensors");
  std::vector<std::pair<std::string, torch::Tensor>> a, b;
  nlohmann::json map;
  for (auto& [name, t] : tensors) {
    const bool first = name.find("layers.1.") == std::string::npos;
    (first ? a : b).emplace_back(name, t);
    map[name] = first ? "model-00001-of-00002.safetensors" : "model-00002-of-00002.safetensors";
  }
  fs::remove(dir.path() / "model.safetensors");
  write_safetensors(dir.path() / "model-00001-of-00002.safetensors", a);
  write_safetensors(dir.path() / "model-00002-of-00002.safetensors", b);
  testing::write_file(dir.path() / "model.safetensors.index.json",
                      nlohmann::json{{"weight_map", map}}.dump());
  Transformer loaded = load_hf_checkpoint(dir.path());
  EXPECT_TRUE(torch::equal(logits_of(model), logits_of(loaded)));
}

TEST(Checkpoint, ValueHeadFromACausalLmKeepsTheBackbone) {
  ScratchDir dir("ckpt");
  Transformer actor = saved_model(dir.path());
  LoadOptions as_critic;
  as_critic.head = Head::kValue;
  Transformer critic = load_hf_checkpoint(dir.path(), as_critic);
  EXPECT_TRUE(critic->score);
  EXPECT_FALSE(critic->lm_head);
  EXPECT_TRUE(torch::equal(critic->layers[1]->named_parameters()["wq.weight"],
                           actor->layers[1]->named_parameters()["wq.weight"]));
  // Saved as a sequence-classification model, it loads back with its head.
  ScratchDir out("ckpt");
  save_hf_checkpoint(critic, out.path());
  EXPECT_NE(testing::read_file(out.path() / "config.json").find("LlamaForSequenceClassification"),
            std::string::npos);
  Transformer back = load_hf_checkpoint(out.path());
  EXPECT_EQ(back->config().head, Head::kValue);
  EXPECT_TRUE(torch::equal(back->score->weight, critic->score->weight));
  LoadOptions as_actor;
  as_actor.head = Head::kLanguageModel;
  expect_model_error([&] { load_hf_checkpoint(out.path(), as_actor); },
                     {"config.json", "value model", "LlamaForSequenceClassification"});
}

TEST(CheckpointErrors, MissingTensorNamesTheFileAndTheTensor) {
  ScratchDir dir("ckpt");
  saved_model(dir.path());
  edit_tensors(dir.path(), [](const std::string& name, torch::Tensor&) {
    return name != "model.layers.1.mlp.up_proj.weight";
  });
  expect_model_error(
      [&] { load_hf_checkpoint(dir.path()); },
      {(dir.path() / "model.safetensors").string(), "missing tensor 'model.layers.1.mlp.up_proj.weight'"});
}

TEST(CheckpointErrors, WrongShapeNamesTheTensorAndBothShapes) {
  ScratchDir dir("ckpt");
  saved_model(dir.path());
  edit_tensors(dir.path(), [](const std::string& name, torch::Tensor& t) {
    if (name == "model.layers.0.self_attn.k_proj.weight") t = torch::zeros({8, 32});
    return true;
  });
  expect_model_error([&] { load_hf_checkpoint(dir.path()); },
                     {"model.safetensors", "'model.layers.0.self_attn.k_proj.weight'", "[8, 32]", "[16, 32]",
                      "config.json"});
}

TEST(CheckpointErrors, TensorsOfLayersTheConfigDoesNotHaveAreRejected) {
  ScratchDir dir("ckpt");
  saved_model(dir.path());
  edit_config(dir.path(), [](nlohmann::json& j) { j["num_hidden_layers"] = 1; });
  expect_model_error([&] { load_hf_checkpoint(dir.path()); },
                     {"model.safetensors", "'model.layers.1.", "num_hidden_layers"});
}

TEST(CheckpointErrors, UnknownArchitectureNamesConfigAndArchitecture) {
  ScratchDir dir("ckpt");
  saved_model(dir.path());
  edit_config(dir.path(), [](nlohmann::json& j) { j["architectures"] = {"GPT2LMHeadModel"}; });
  expect_model_error(
      [&] { load_hf_checkpoint(dir.path()); },
      {(dir.path() / "config.json").string(), "architecture 'GPT2LMHeadModel' is not supported"});
}

TEST(CheckpointErrors, MissingOrMalformedSettingsNameTheSetting) {
  ScratchDir dir("ckpt");
  saved_model(dir.path());
  edit_config(dir.path(), [](nlohmann::json& j) { j.erase("hidden_size"); });
  expect_model_error([&] { load_hf_checkpoint(dir.path()); },
                     {"config.json", "missing setting 'hidden_size'"});
  edit_config(dir.path(), [](nlohmann::json& j) {
    j["hidden_size"] = 32;
    j["num_key_value_heads"] = 3;
  });
  expect_model_error([&] { load_hf_checkpoint(dir.path()); }, {"config.json", "num_key_value_heads (3)"});
  edit_config(dir.path(), [](nlohmann::json& j) {
    j["num_key_value_heads"] = 2;
    j["rope_parameters"] = {{"rope_type", "yarn"}, {"rope_theta", 10000.0}, {"factor", 4.0}};
  });
  expect_model_error([&] { load_hf_checkpoint(dir.path()); }, {"config.json", "rope type 'yarn'"});
  edit_config(dir.path(), [](nlohmann::json& j) {
    j.erase("rope_parameters");
    j["hidden_act"] = "gelu";
  });
  expect_model_error([&] { load_hf_checkpoint(dir.path()); }, {"config.json", "'hidden_act'", "gelu"});
}

TEST(CheckpointErrors, DirectoryWithoutWeightsOrConfigSaysWhatIsMissing) {
  ScratchDir dir("ckpt");
  expect_model_error([&] { load_hf_checkpoint(dir.path()); },
                     {(dir.path() / "config.json").string(), "cannot open"});
  saved_model(dir.path());
  fs::remove(dir.path() / "model.safetensors");
  expect_model_error([&] { load_hf_checkpoint(dir.path()); }, {dir.path().string(), "no model.safetensors"});
  expect_model_error([&] { load_hf_checkpoint(dir.path() / "nope"); },
                     {"nope", "not a checkpoint directory"});
}

TEST(CheckpointErrors, TokenizerLargerThanTheVocabularyNamesBothFiles) {
  TransformerConfig c = testing::tiny_config();
  c.vocab_size = 12;
  CharTokenizer tokenizer;  // 18 ids
  expect_model_error(
      [&] { check_tokenizer_fits(tokenizer, "built-in char tokenizer", c, "ckpt/config.json"); },
      {"built-in char tokenizer", "18 token ids", "ckpt/config.json", "'vocab_size' = 12"});
  c.vocab_size = 18;
  EXPECT_NO_THROW(check_tokenizer_fits(tokenizer, "t", c, "c"));
}

TEST(CheckpointErrors, PromptLongerThanTheContextNamesTheSetting) {
  torch::manual_seed(3);
  Transformer model(testing::tiny_config());  // context 96
  GenerationOptions o;
  o.sampling.greedy = true;
  o.max_new_tokens = 4;
  torch::Tensor long_prompt = torch::ones({1, 97}, torch::kInt64);
  expect_model_error([&] { generate(model, long_prompt, torch::ones_like(long_prompt), o); },
                     {"97 tokens is longer than the context", "'max_position_embeddings' = 96"});
  torch::Tensor prompt = torch::ones({1, 94}, torch::kInt64);
  expect_model_error([&] { generate(model, prompt, torch::ones_like(prompt), o); },
                     {"'max_new_tokens' 4 exceeds", "'max_position_embeddings' = 96"});
}

TEST(CheckpointErrors, OutOfRangeSamplingAndTokensNameTheSetting) {
  torch::manual_seed(3);
  Transformer model(testing::tiny_config());
  torch::Tensor prompt = torch::ones({1, 3}, torch::kInt64);
  GenerationOptions o;
  o.sampling.temperature = 0;
  expect_model_error([&] { generate(model, prompt, torch::ones_like(prompt), o); }, {"'temperature'"});
  o.sampling = {false, 1.0, 0, 1.5};
  expect_model_error([&] { generate(model, prompt, torch::ones_like(prompt), o); }, {"'top_p'"});
  o.sampling = {};
  torch::Tensor bad = torch::full({1, 3}, 64, torch::kInt64);
  expect_model_error([&] { generate(model, bad, torch::ones_like(bad), o); }, {"'vocab_size' = 64"});
}

}  // namespace
}  // namespace rlwb::workers::model
