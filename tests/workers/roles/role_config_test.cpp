// Bad model settings fail when the role is created -- before any training --
// with a message that names the file or config key and the tensor or
// setting: a checkpoint with a missing tensor or a wrong shape, an unknown
// architecture, a tokenizer larger than the vocabulary, a prompt longer
// than the context.
#include "tests/workers/roles/rl_test_support.h"
#include "workers/model/hf_checkpoint.h"
#include "workers/model/safetensors.h"

#include <gtest/gtest.h>
#include <torch/torch.h>

#include <filesystem>

namespace rlwb::testing {
namespace {

namespace fs = std::filesystem;
using namespace rlwb::workers::model;

std::string error_of(const std::function<void()>& fn) {
  try {
    fn();
  } catch (const std::exception& e) {
    return e.what();
  }
  return "(no error)";
}

// A checkpoint of the tiny actor, saved by the role itself.
fs::path tiny_checkpoint() {
  fs::path dir = fs::temp_directory_path() /
                 ("rlwb-role-ckpt-" + std::to_string(::getpid()) + "-" + std::to_string(std::rand()));
  LocalRole actor("actor", tiny_actor_config());
  actor.call("save_checkpoint", core::Batch{}, {}, {{"dir", dir.string()}});
  return dir;
}

nlohmann::json from_checkpoint(const fs::path& dir) {
  return {{"checkpoint", dir.string()}, {"tokenizer", "char"}};
}

TEST(RoleConfig, NoModelAndNoCheckpointNamesTheKey) {
  auto msg = error_of([] { LocalRole("actor", {{"tokenizer", "char"}}, "actor"); });
  EXPECT_NE(msg.find("models.actor.config"), std::string::npos) << msg;
  EXPECT_NE(msg.find("checkpoint"), std::string::npos) << msg;
}

TEST(RoleConfig, UnknownArchitectureIsRefused) {
  auto config = tiny_actor_config();
  config["model"]["architecture"] = "gpt2";
  auto msg = error_of([&] { LocalRole("actor", config, "actor"); });
  EXPECT_NE(msg.find("models.actor.config.model.architecture"), std::string::npos) << msg;
  EXPECT_NE(msg.find("gpt2"), std::string::npos) << msg;
}

TEST(RoleConfig, CheckpointWithAMissingTensorNamesFileAndTensor) {
  fs::path dir = tiny_checkpoint();
  auto tensors = read_safetensors(dir / "model.safetensors");
  tensors.erase("model.norm.weight");
  write_safetensors(dir / "model.safetensors", {tensors.begin(), tensors.end()});
  auto msg = error_of([&] { LocalRole("actor", from_checkpoint(dir)); });
  EXPECT_NE(msg.find("model.norm.weight"), std::string::npos) << msg;
  EXPECT_NE(msg.find(dir.string()), std::string::npos) << msg;
  fs::remove_all(dir);
}

TEST(RoleConfig, CheckpointWithAWrongShapeNamesTheTensor) {
  fs::path dir = tiny_checkpoint();
  auto tensors = read_safetensors(dir / "model.safetensors");
  tensors["model.norm.weight"] = torch::ones({7});
  write_safetensors(dir / "model.safetensors", {tensors.begin(), tensors.end()});
  auto msg = error_of([&] { LocalRole("actor", from_checkpoint(dir)); });
  EXPECT_NE(msg.find("model.norm.weight"), std::string::npos) << msg;
  fs::remove_all(dir);
}

TEST(RoleConfig, TokenizerLargerThanTheVocabularyIsRefused) {
  auto config = tiny_actor_config();
  config["model"]["vocab_size"] = 10;  // the char tokenizer has 18 ids
  auto msg = error_of([&] { LocalRole("actor", config, "actor"); });
  EXPECT_NE(msg.find("models.actor.config.tokenizer"), std::string::npos) << msg;
  EXPECT_NE(msg.find("vocab"), std::string::npos) << msg;
}

TEST(RoleConfig, PromptLongerThanTheContextNamesTheSetting) {
  LocalRole actor("actor", tiny_actor_config());  // context 16, 3 new tokens
  core::Batch b;
  b.set_objects("prompts", {nlohmann::json("1234567+1234567=")});
  auto msg = error_of([&] { actor.call("generate", b, {"responses", "response_mask"}); });
  EXPECT_NE(msg.find("max_position_embeddings"), std::string::npos) << msg;
  auto sft = error_of([&] {
    core::Batch s = b;
    s.set_objects("answers", {nlohmann::json("2469134")});
    actor.call("sft_update", s);
  });
  EXPECT_NE(sft.find("max_position_embeddings"), std::string::npos) << sft;
}

}  // namespace
}  // namespace rlwb::testing
