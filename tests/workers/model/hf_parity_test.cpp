// Parity with Hugging Face transformers (the version pinned in
// scripts/python-requirements.txt): tiny random LlamaForCausalLM and
// Qwen2ForCausalLM made in Python load in RLWB with the same logits and the
// same greedy continuations; checkpoints RLWB exports load back in
// transformers with the same outputs. Without the Python side these tests
// FAIL, loudly: parity that is not checked is not parity.
#include <gtest/gtest.h>
#include <torch/torch.h>

#include "tests/workers/model/model_test_support.h"
#include "workers/model/generation.h"
#include "workers/model/hf_checkpoint.h"
#include "workers/model/safetensors.h"
#include "workers/model/sequence_scores.h"

namespace rlwb::workers::model {
namespace {

namespace fs = std::filesystem;
using testing::PythonRun;
using testing::ScratchDir;

class HfParity : public ::testing::Test {
 protected:
  static void SetUpTestSuite() { dir_ = testing::cached_reference("models", &run_); }

  void SetUp() override { RLWB_EXPECT_REFERENCE_RAN(run_); }

  void expect_logits_match(const std::string& name) {
    Transformer model = load_hf_checkpoint(dir_ / name);
    auto expected = read_safetensors(dir_ / (name + "_expected.safetensors"));
    torch::NoGradGuard no_grad;
    torch::Tensor logits = model->forward(expected.at("input_ids"), torch::Tensor());
    const double diff = (logits - expected.at("logits")).abs().max().item<double>();
    EXPECT_LE(diff, 1e-4) << name << ": max abs logit difference to transformers";
    RecordProperty(name + "_max_abs_diff", std::to_string(diff));
  }

  void expect_greedy_matches(const std::string& name) {
    Transformer model = load_hf_checkpoint(dir_ / name);
    auto expected = read_safetensors(dir_ / (name + "_expected.safetensors"));
    GenerationOptions o;
    o.sampling.greedy = true;
    o.max_new_tokens = expected.at("greedy_tokens").size(1);
    o.pad_token_id = 0;
    GenerationResult r = generate(model, expected.at("prompt_ids"), expected.at("prompt_mask"), o);
    EXPECT_TRUE(torch::equal(r.responses, expected.at("greedy_tokens"))) << name << " RLWB:\n"
                                                                         << r.responses << "\ntransformers:\n"
                                                                         << expected.at("greedy_tokens");
  }

  // Trains the loaded model one AdamW step (so the export is not the file
  // we read), saves it under out/<tag>, and writes out/<tag>.safetensors
  // with RLWB's outputs for transformers to compare against.
  std::vector<std::string> export_for_transformers(const std::string& name, std::optional<Head> head,
                                                   const fs::path& out, const std::string& tag) {
    LoadOptions load;
    load.head = head;
    Transformer model = load_hf_checkpoint(dir_ / name, load);
    torch::Tensor ids = read_safetensors(dir_ / (name + "_expected.safetensors")).at("input_ids");
    torch::Tensor mask = torch::ones_like(ids);
    torch::optim::AdamW optimizer(model->parameters(), torch::optim::AdamWOptions(1e-2));
    SequenceBatch seq{ids, mask, 5};
    torch::Tensor loss = head == Head::kValue ? response_values(model, seq).pow(2).mean()
                                              : -response_log_probs(model, seq).log_probs.mean();
    loss.backward();
    optimizer.step();

    save_hf_checkpoint(model, out / tag);
    std::vector<std::pair<std::string, torch::Tensor>> ref = {{"input_ids", ids}, {"attention_mask", mask}};
    {
      torch::NoGradGuard no_grad;
      if (head == Head::kValue) {
        ref.emplace_back("scores", sequence_scores(model, ids, mask));
      } else {
        ref.emplace_back("logits", model->forward(ids, mask));
      }
    }
    write_safetensors(out / (tag + ".safetensors"), ref);
    return {(out / tag).string(), (out / (tag + ".safetensors")).string()};
  }

  static fs::path dir_;
  static PythonRun run_;
};
fs::path HfParity::dir_;
PythonRun HfParity::run_;

TEST_F(HfParity, LlamaLogitsMatchTransformers) { expect_logits_match("llama"); }
TEST_F(HfParity, Qwen2LogitsMatchTransformers) { expect_logits_match("qwen2"); }
TEST_F(HfParity, LlamaGreedyContinuationsMatchTransformers) { expect_greedy_matches("llama"); }
TEST_F(HfParity, Qwen2GreedyContinuationsMatchTransformers) { expect_greedy_matches("qwen2"); }
// One Python run checks all three exports (importing transformers is the
// slow part): a Llama actor, a Qwen2 actor with tied embeddings, and a value
// model that transformers loads as LlamaForSequenceClassification.
TEST_F(HfParity, ExportedActorsAndValueModelLoadInTransformersWithTheSameOutputs) {
  ScratchDir out("export");
  std::vector<std::string> args = {"verify-export"};
  for (const auto& pair : {export_for_transformers("llama", std::nullopt, out.path(), "llama_actor"),
                           export_for_transformers("qwen2", std::nullopt, out.path(), "qwen2_actor"),
                           export_for_transformers("llama", Head::kValue, out.path(), "llama_critic")}) {
    args.insert(args.end(), pair.begin(), pair.end());
  }
  PythonRun run = testing::run_reference_script(args);
  RLWB_EXPECT_REFERENCE_RAN(run);
  EXPECT_NE(run.output.find("LlamaForCausalLM: max abs diff"), std::string::npos) << run.output;
  EXPECT_NE(run.output.find("Qwen2ForCausalLM: max abs diff"), std::string::npos) << run.output;
  EXPECT_NE(run.output.find("LlamaForSequenceClassification: max abs diff"), std::string::npos) << run.output;
}

TEST_F(HfParity, ReadsTheConfigTransformersWrote) {
  TransformerConfig llama = read_hf_config(dir_ / "llama" / "config.json");
  EXPECT_EQ(llama.rope_theta, 5000.0);  // transformers 5 puts it in rope_parameters
  EXPECT_EQ(llama.num_kv_heads, 2);
  EXPECT_FALSE(llama.tie_word_embeddings);
  TransformerConfig qwen = read_hf_config(dir_ / "qwen2" / "config.json");
  EXPECT_EQ(qwen.architecture, Architecture::kQwen2);
  EXPECT_EQ(qwen.rope_theta, 1000000.0);
  EXPECT_TRUE(qwen.tie_word_embeddings);
  EXPECT_TRUE(qwen.qkv_bias);
}

}  // namespace
}  // namespace rlwb::workers::model
