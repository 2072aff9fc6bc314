// SentencePieceTokenizer on the models sentencepiece_corpus.py trains: which
// file load_tokenizer() picks, the special and added tokens of the config
// files, and bad input (a corrupt or cut-short tokenizer.model, text that is
// not UTF-8, ids no token has). The corpus parity is
// tokenizer_parity_test.cpp's.
#include <gtest/gtest.h>

#include <algorithm>

#include "tests/workers/model/model_test_support.h"
#include "workers/model/bpe_tokenizer.h"
#include "workers/model/model_error.h"
#include "workers/model/sentencepiece_tokenizer.h"

namespace rlwb::workers::model {
namespace {

using testing::ScratchDir;
namespace fs = std::filesystem;

class SentencePieceModels : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    dir_ = testing::cached_reference("sentencepiece-corpus", &run_, "sentencepiece_corpus.py");
  }
  static fs::path dir_;
  static testing::PythonRun run_;
};
fs::path SentencePieceModels::dir_;
testing::PythonRun SentencePieceModels::run_;

// The message of the ModelError that loading dir throws, "" when none.
std::string load_error(const fs::path& dir) {
  try {
    load_tokenizer(dir);
  } catch (const ModelError& e) {
    return e.what();
  }
  return "";
}

TEST_F(SentencePieceModels, ACorruptOrCutShortModelNamesTheFileAndSaysWhatToDo) {
  RLWB_EXPECT_REFERENCE_RAN(run_);
  const std::string good = testing::read_file(dir_ / "llama_bpe" / "tokenizer.model");
  ASSERT_GT(good.size(), 1000u);
  const std::pair<const char*, std::string> bad[] = {
      {"text", "this is not a model\n"},
      {"half", good.substr(0, good.size() / 2)},
      {"one byte short", good.substr(0, good.size() - 1)},
      {"empty", ""},
  };
  for (const auto& [what, bytes] : bad) {
    ScratchDir dir("sp");
    testing::write_file(dir.path() / "tokenizer.model", bytes);
    const std::string error = load_error(dir.path());
    EXPECT_NE(error.find((dir.path() / "tokenizer.model").string()), std::string::npos)
        << what << ": " << error;
    EXPECT_NE(error.find("not a SentencePiece model"), std::string::npos) << what << ": " << error;
    EXPECT_NE(error.find("copy tokenizer.model again"), std::string::npos) << what << ": " << error;
  }
}

// A file cut between two fields of the protobuf still parses; the missing
// normalizer spec gives it away. Every cut of the last bytes and every
// 101st before them.
TEST_F(SentencePieceModels, AModelCutShortAnywhereIsRefused) {
  RLWB_EXPECT_REFERENCE_RAN(run_);
  for (const char* model : {"llama_bpe", "t5_unigram", "nfkc_bpe"}) {
    const std::string good = testing::read_file(dir_ / model / "tokenizer.model");
    size_t refused = 0, tried = 0;
    for (size_t cut = 0; cut < good.size(); cut += cut + 64 < good.size() ? 101 : 1) {
      ++tried;
      try {
        SentencePieceTokenizer t(good.substr(0, cut), "cut.model");
        ADD_FAILURE() << model << " cut at " << cut << " of " << good.size() << " bytes loads";
      } catch (const ModelError& e) {
        refused += std::string(e.what()).find("cut.model: not a SentencePiece model") == 0;
      }
    }
    EXPECT_EQ(refused, tried) << model;
    EXPECT_NO_THROW(SentencePieceTokenizer(good, "whole.model")) << model;
  }
}

TEST_F(SentencePieceModels, TokenizerJsonWinsOverTokenizerModelAsInTransformers) {
  RLWB_EXPECT_REFERENCE_RAN(run_);
  ScratchDir dir("sp");
  fs::copy_file(dir_ / "nfkc_bpe" / "tokenizer.model", dir.path() / "tokenizer.model");
  auto only_model = load_tokenizer(dir.path());
  EXPECT_NE(dynamic_cast<SentencePieceTokenizer*>(only_model.get()), nullptr);
  testing::write_file(dir.path() / "tokenizer.json", R"({
    "added_tokens": [], "normalizer": null, "decoder": {"type": "ByteLevel"},
    "pre_tokenizer": {"type": "ByteLevel", "add_prefix_space": false, "use_regex": true},
    "model": {"type": "BPE", "vocab": {"a": 0, "b": 1}, "merges": []}})");
  auto both = load_tokenizer(dir.path());
  EXPECT_NE(dynamic_cast<BpeTokenizer*>(both.get()), nullptr);
  auto named = load_tokenizer(dir.path() / "tokenizer.model");  // the file itself: what it is
  EXPECT_NE(dynamic_cast<SentencePieceTokenizer*>(named.get()), nullptr);
  EXPECT_NE(load_error(dir.path() / "none").find("no such tokenizer file"), std::string::npos);
  ScratchDir empty("sp");
  EXPECT_NE(load_error(empty.path()).find("neither tokenizer.json nor tokenizer.model"), std::string::npos);
}

TEST_F(SentencePieceModels, SpecialTokensComeFromTheConfigFilesElseFromTheModel) {
  RLWB_EXPECT_REFERENCE_RAN(run_);
  auto t5 = load_tokenizer(dir_ / "t5_unigram");  // tokenizer_config.json + special_tokens_map.json
  EXPECT_EQ(t5->special_ids().pad, 0);
  EXPECT_EQ(t5->special_ids().eos, 1);
  EXPECT_EQ(t5->special_ids().bos, -1);
  EXPECT_EQ(t5->token_id("<extra_id_1>"), 1500);  // added past the model's 1,500 pieces
  EXPECT_EQ(t5->vocab_size(), 1501);
  const auto ids = t5->encode("x<extra_id_1>   y");
  ASSERT_EQ(std::count(ids.begin(), ids.end(), 1500), 1);
  // rstrip takes the spaces; "y" then gets the dummy prefix as a piece of text of its own.
  EXPECT_EQ(t5->decode(ids, /*skip_special_tokens=*/false), "x<extra_id_1> y");
  EXPECT_EQ(t5->decode(ids), "x y");
  EXPECT_EQ(t5->decode(t5->encode("<extra_id_0>")), "") << "a control piece named special";

  auto llama = load_tokenizer(dir_ / "llama_bpe");  // tokenizer_config.json as transformers saves it
  EXPECT_EQ(llama->special_ids().bos, 1);
  EXPECT_EQ(llama->special_ids().eos, 2);
  EXPECT_EQ(llama->special_ids().pad, -1);
  EXPECT_EQ(llama->encode("<s>"), (std::vector<int64_t>{1})) << "special tokens in text are cut out";
  EXPECT_EQ(llama->decode(llama->encode("a<|im_start|>b"), false), "a<|im_start|> b")
      << "each piece of text between added tokens gets the dummy prefix";

  auto plain = load_tokenizer(dir_ / "nfkc_bpe");  // no config files: the model's reserved ids
  EXPECT_EQ(plain->special_ids().bos, 1);
  EXPECT_EQ(plain->special_ids().eos, 2);
  EXPECT_EQ(plain->special_ids().pad, 3);
}

TEST_F(SentencePieceModels, ASpecialTokenTheModelLacksNamesTheConfigFile) {
  RLWB_EXPECT_REFERENCE_RAN(run_);
  ScratchDir dir("sp");
  fs::copy_file(dir_ / "nfkc_bpe" / "tokenizer.model", dir.path() / "tokenizer.model");
  testing::write_file(dir.path() / "tokenizer_config.json", R"({"additional_special_tokens": ["<nope>"]})");
  const std::string error = load_error(dir.path());
  EXPECT_NE(error.find("tokenizer_config.json"), std::string::npos) << error;
  EXPECT_NE(error.find("'<nope>'"), std::string::npos) << error;
  EXPECT_NE(error.find("added_tokens_decoder"), std::string::npos) << error;
}

TEST_F(SentencePieceModels, TextThatIsNotUtf8AndIdsNoTokenHasAreErrors) {
  RLWB_EXPECT_REFERENCE_RAN(run_);
  auto t = load_tokenizer(dir_ / "llama_bpe");
  EXPECT_THROW(t->encode("ab\xff"), ModelError);
  EXPECT_THROW(t->decode({t->vocab_size()}), ModelError);
  EXPECT_THROW(t->decode({-1}), ModelError);
  // Byte pieces that are not UTF-8 decode to one U+FFFD each, as HF's ByteFallback does.
  const auto ff = t->token_id("<0xFF>"), a = t->token_id("<0x41>");
  ASSERT_TRUE(ff && a);
  EXPECT_EQ(t->decode({*a, *ff, *ff, *a}), "\xEF\xBF\xBD\xEF\xBF\xBD\xEF\xBF\xBD\xEF\xBF\xBD");
  EXPECT_EQ(t->decode({*a, *a}), "AA");
}

}  // namespace
}  // namespace rlwb::workers::model
