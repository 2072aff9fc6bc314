// The tokenizers against their references, line by line, on one corpus of
// more than 10,000 lines in many scripts (tokenizer_corpus.py: emoji, long
// white-space runs, special tokens in text, ...); every line must encode to
// the reference's ids and decode to its text, with and without special
// tokens.
//   - BpeTokenizer against the Hugging Face `tokenizers` library:
//     tokenizer_corpus.py trains GPT-2, Qwen2 and Llama 3 style tokenizers
//     (and two that cover added-token flags and every Split behavior).
//   - SentencePieceTokenizer: sentencepiece_corpus.py trains a Llama style
//     BPE with byte fallback and user-defined and control symbols, a T5
//     style unigram (NFKC, white-space removal, an added token past the
//     model) and a BPE without byte fallback or dummy prefix, with the
//     python sentencepiece package. Its ids are the reference for all three:
//     SentencePiece's own segmentation is what the model was trained on.
//     The Llama style model is also checked against HF `tokenizers` ids
//     (transformers' fast tokenizer for the directory, with LlamaConverter's
//     legacy normalizer), the one conversion that keeps the model's
//     segmentation; transformers' T5 conversion does not (it splits on white
//     space first) and the third has no transformers class. Decodings are
//     HF `tokenizers`' decoder for each kind of model, and, where the ids
//     hold no added or unknown token, python sentencepiece's decode.
#include <gtest/gtest.h>

#include <fstream>
#include <iostream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "tests/workers/model/model_test_support.h"
#include "workers/model/bpe_tokenizer.h"
#include "workers/model/model_error.h"
#include "workers/model/sentencepiece_tokenizer.h"

namespace rlwb::workers::model {
namespace {

class BpeParityWithHfTokenizers : public ::testing::TestWithParam<std::string> {
 protected:
  static void SetUpTestSuite() {
    dir_ = testing::cached_reference("tokenizer-corpus", &run_, "tokenizer_corpus.py");
  }
  static std::filesystem::path dir_;
  static testing::PythonRun run_;
};
std::filesystem::path BpeParityWithHfTokenizers::dir_;
testing::PythonRun BpeParityWithHfTokenizers::run_;

std::string ids_text(const std::vector<int64_t>& ids) {
  std::ostringstream s;
  s << '[';
  for (size_t k = 0; k < ids.size(); ++k) s << (k ? ", " : "") << ids[k];
  s << ']';
  return s.str();
}

// One reference of one tokenizer over the whole corpus file: the ids under
// row[style][ids_key] and the decodings row[style]["decoded"] /
// ["decoded_skip"] (and ["spm_decoded"] where present, against the decode
// that skips special tokens). Reports the first 20 lines that differ and
// prints the counts.
void expect_corpus_parity(const Tokenizer& tokenizer, const std::filesystem::path& corpus,
                          const std::string& style, const std::string& ids_key,
                          const std::string& reference) {
  std::ifstream in(corpus, std::ios::binary);
  ASSERT_TRUE(in) << corpus;
  size_t compared = 0, mismatches = 0;
  std::string line;
  while (std::getline(in, line)) {
    const auto row = nlohmann::json::parse(line);
    const std::string text = row.at("text").get<std::string>();
    const auto& want = row.at(style);
    const auto want_ids = want.at(ids_key).get<std::vector<int64_t>>();
    ++compared;
    std::vector<int64_t> got;
    std::string error;
    try {
      got = tokenizer.encode(text);
    } catch (const std::exception& e) {
      error = e.what();
    }
    const std::string kept = tokenizer.decode(want_ids, /*skip_special_tokens=*/false);
    const std::string skipped = tokenizer.decode(want_ids, /*skip_special_tokens=*/true);
    const bool round_trip =
        !want.contains("spm_decoded") || skipped == want.at("spm_decoded").get<std::string>();
    const bool same = error.empty() && got == want_ids && kept == want.at("decoded").get<std::string>() &&
                      skipped == want.at("decoded_skip").get<std::string>() && round_trip;
    if (same) continue;
    if (++mismatches <= 20) {
      ADD_FAILURE() << style << " line " << compared << ": " << nlohmann::json(text).dump() << "\n  "
                    << reference << " ids: " << ids_text(want_ids)
                    << "\n  RLWB ids: " << (error.empty() ? ids_text(got) : error)
                    << "\n  HF decode:   " << want.at("decoded").dump() << " / "
                    << want.at("decoded_skip").dump()
                    << (want.contains("spm_decoded") ? " / sentencepiece " + want.at("spm_decoded").dump()
                                                     : "")
                    << "\n  RLWB decode: " << nlohmann::json(kept).dump() << " / "
                    << nlohmann::json(skipped).dump();
    }
  }
  std::cout << style << ": compared " << compared << " lines with " << reference << ", " << mismatches
            << " differ\n";
  EXPECT_GE(compared, 10000u);
  EXPECT_EQ(mismatches, 0u);
}

TEST_P(BpeParityWithHfTokenizers, EveryCorpusLineEncodesAndDecodesAsTheLibraryDoes) {
  RLWB_EXPECT_REFERENCE_RAN(run_);
  const std::string style = GetParam();
  const auto path = dir_ / style / "tokenizer.json";
  BpeTokenizer tokenizer(testing::read_file(path), path.string());
  expect_corpus_parity(tokenizer, dir_ / "corpus.jsonl", style, "ids", "HF tokenizers");
}

INSTANTIATE_TEST_SUITE_P(Styles, BpeParityWithHfTokenizers,
                         ::testing::Values("gpt2", "qwen2", "llama3", "flags", "behaviors"));

class SentencePieceParity : public ::testing::TestWithParam<std::string> {
 protected:
  static void SetUpTestSuite() {
    dir_ = testing::cached_reference("sentencepiece-corpus", &run_, "sentencepiece_corpus.py");
  }
  static std::filesystem::path dir_;
  static testing::PythonRun run_;
};
std::filesystem::path SentencePieceParity::dir_;
testing::PythonRun SentencePieceParity::run_;

// Through load_tokenizer, as a role loads a checkpoint directory: the
// config files' special tokens and added tokens take part.
TEST_P(SentencePieceParity, EveryCorpusLineGivesTheIdsAndTextOfPythonSentencePiece) {
  RLWB_EXPECT_REFERENCE_RAN(run_);
  const std::string model = GetParam();
  auto tokenizer = load_tokenizer(dir_ / model);
  ASSERT_NE(dynamic_cast<SentencePieceTokenizer*>(tokenizer.get()), nullptr);
  expect_corpus_parity(*tokenizer, dir_ / "sentencepiece_corpus.jsonl", model, "spm_ids",
                       "python sentencepiece");
}

INSTANTIATE_TEST_SUITE_P(Models, SentencePieceParity,
                         ::testing::Values("llama_bpe", "t5_unigram", "nfkc_bpe"));

TEST_F(SentencePieceParity, LlamaStyleModelGivesTheIdsOfHfTokenizers) {
  RLWB_EXPECT_REFERENCE_RAN(run_);
  auto tokenizer = load_tokenizer(dir_ / "llama_bpe");
  expect_corpus_parity(*tokenizer, dir_ / "sentencepiece_corpus.jsonl", "llama_bpe", "hf_ids",
                       "HF tokenizers");
}

}  // namespace
}  // namespace rlwb::workers::model
