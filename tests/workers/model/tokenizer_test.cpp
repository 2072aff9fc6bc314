// Tokenizers: the built-in character tokenizer, byte-level BPE on a
// hand-written tokenizer.json, the pre-tokenizer scanner, and agreement with
// the HF `tokenizers` library on tokenizers it trained (GPT-2, Qwen2 and
// Llama 3 pre-tokenizers).
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "tests/workers/model/model_test_support.h"
#include "workers/model/bpe_tokenizer.h"
#include "workers/model/char_tokenizer.h"
#include "workers/model/model_error.h"

namespace rlwb::workers::model {
namespace {

using testing::ScratchDir;

TEST(CharTokenizer, RoundTripsArithmetic) {
  CharTokenizer t;
  std::vector<int64_t> ids = t.encode("37+48=85");
  EXPECT_EQ(ids, (std::vector<int64_t>{6, 10, 13, 7, 11, 16, 11, 8}));
  EXPECT_EQ(t.decode(ids), "37+48=85");
  EXPECT_EQ(t.vocab_size(), 18);
  EXPECT_EQ(t.encode("1 - 2 * 3"), t.encode("1 - 2 * 3"));
  EXPECT_EQ(t.decode(t.encode("9*9 - 0")), "9*9 - 0");
}

TEST(CharTokenizer, SpecialTokensHaveFixedIdsAndAreSkippedWhenDecoding) {
  CharTokenizer t;
  EXPECT_EQ(t.special_ids().pad, 0);
  EXPECT_EQ(t.special_ids().bos, 1);
  EXPECT_EQ(t.special_ids().eos, 2);
  EXPECT_EQ(t.decode({1, 4, 2, 0}), "1");
  EXPECT_EQ(t.decode({1, 4, 2, 0}, /*skip_special_tokens=*/false), "<bos>1<eos><pad>");
  EXPECT_EQ(t.token_id("<eos>"), 2);
  EXPECT_EQ(t.token_id("="), 16);
}

TEST(CharTokenizer, UnknownCharacterIsNamed) {
  CharTokenizer t;
  try {
    t.encode("12/4");
    FAIL();
  } catch (const ModelError& e) {
    EXPECT_NE(std::string(e.what()).find("'/'"), std::string::npos) << e.what();
  }
  EXPECT_THROW(t.decode({18}), ModelError);
}

// "hello world" in a byte-level BPE whose merges are easy to follow.
constexpr const char* kHandWritten = R"({
  "added_tokens": [{"id": 15, "content": "<eos>", "special": true}],
  "normalizer": null,
  "pre_tokenizer": {"type": "ByteLevel", "add_prefix_space": false, "use_regex": true},
  "model": {"type": "BPE",
    "vocab": {"h": 0, "e": 1, "l": 2, "o": 3, "Ġ": 4, "w": 5, "r": 6, "d": 7,
              "he": 8, "ll": 9, "hell": 10, "hello": 11, "Ġw": 12, "or": 13, "Ġwor": 14},
    "merges": ["h e", "l l", "he ll", "hell o", "Ġ w", "o r", ["Ġw", "or"]]}
})";

TEST(BpeTokenizer, AppliesMergesByRank) {
  BpeTokenizer t(kHandWritten, "hand.json");
  // "hello" merges all the way; " world" -> Ġwor + l + d
  EXPECT_EQ(t.encode("hello world"), (std::vector<int64_t>{11, 14, 2, 7}));
  EXPECT_EQ(t.encode("hello world<eos>"), (std::vector<int64_t>{11, 14, 2, 7, 15}));
  EXPECT_EQ(t.encode("<eos>hell"), (std::vector<int64_t>{15, 10}));
  EXPECT_EQ(t.vocab_size(), 16);
}

TEST(BpeTokenizer, DecodesBytesBackAndSkipsSpecialTokens) {
  BpeTokenizer t(kHandWritten, "hand.json");
  EXPECT_EQ(t.decode({11, 14, 2, 7, 15}), "hello world");
  EXPECT_EQ(t.decode({11, 14, 2, 7, 15}, false), "hello world<eos>");
  EXPECT_THROW(t.decode({99}), ModelError);
}

TEST(BpeTokenizer, TextWithBytesOutsideTheVocabularyIsAnError) {
  BpeTokenizer t(kHandWritten, "hand.json");
  try {
    t.encode("hez");
    FAIL();
  } catch (const ModelError& e) {
    EXPECT_NE(std::string(e.what()).find("hand.json"), std::string::npos) << e.what();
  }
}

TEST(BpeTokenizer, RefusesTokenizersThatAreNotByteLevelBpe) {
  nlohmann::json j = nlohmann::json::parse(kHandWritten);
  j["pre_tokenizer"] = {{"type", "Metaspace"}};
  EXPECT_THROW(BpeTokenizer(j.dump(), "t.json"), ModelError);
  j = nlohmann::json::parse(kHandWritten);
  j["model"]["type"] = "WordPiece";
  EXPECT_THROW(BpeTokenizer(j.dump(), "t.json"), ModelError);
  j = nlohmann::json::parse(kHandWritten);
  j["pre_tokenizer"] = {{"type", "Sequence"},
                        {"pretokenizers",
                         {{{"type", "Split"}, {"pattern", {{"Regex", "\\w+"}}}, {"behavior", "Isolated"}},
                          {{"type", "ByteLevel"}, {"use_regex", false}}}}};
  try {
    BpeTokenizer(j.dump(), "t.json");
    FAIL();
  } catch (const ModelError& e) {
    EXPECT_NE(std::string(e.what()).find("\\w+"), std::string::npos) << e.what();
  }
}

std::string qwen_style_json() {
  nlohmann::json j = nlohmann::json::parse(kHandWritten);
  j["pre_tokenizer"] = {{"type", "Sequence"},
                        {"pretokenizers",
                         {{{"type", "Split"},
                           {"pattern",
                            {{"Regex",
                              "(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\\r\\n\\p{L}\\p{N}]?\\p{L}+|\\p{N}| "
                              "?[^\\s\\p{L}\\p{N}]+[\\r\\n]*|"
                              "\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+"}}},
                           {"behavior", "Isolated"},
                           {"invert", false}},
                          {{"type", "ByteLevel"}, {"add_prefix_space", false}, {"use_regex", false}}}}};
  return j.dump();
}

TEST(BpePretokenizer, Qwen2PatternSplitsDigitsSinglyAndKeepsTheSpaceBeforeAWord) {
  BpeTokenizer t(qwen_style_json(), "qwen.json");
  EXPECT_EQ(t.pretokenize("Hello world's 123\n\n  x"),
            (std::vector<std::string>{"Hello", " world", "'s", " ", "1", "2", "3", "\n\n", " ", " x"}));
  EXPECT_EQ(t.pretokenize("I'LL (a+b)!\r\nok"),
            (std::vector<std::string>{"I", "'LL", " (", "a", "+b", ")!\r\n", "ok"}));
}

TEST(BpePretokenizer, Gpt2PatternKeepsDigitRunsAndIsCaseSensitiveOnContractions) {
  BpeTokenizer t(kHandWritten, "gpt2.json");
  EXPECT_EQ(t.pretokenize("It's 2024 I'LL   go"),
            (std::vector<std::string>{"It", "'s", " 2024", " I", "'", "LL", "  ", " go"}));
}

class BpeAgainstHfTokenizers : public ::testing::TestWithParam<std::string> {
 protected:
  static void SetUpTestSuite() { dir_ = testing::cached_reference("tokenizers", &run_); }
  static std::filesystem::path dir_;
  static testing::PythonRun run_;
};
std::filesystem::path BpeAgainstHfTokenizers::dir_;
testing::PythonRun BpeAgainstHfTokenizers::run_;

TEST_P(BpeAgainstHfTokenizers, EncodesAndDecodesLikeTheTokenizersLibrary) {
  RLWB_EXPECT_REFERENCE_RAN(run_);
  const std::string style = GetParam();
  auto expected = nlohmann::json::parse(testing::read_file(dir_ / "expected.json")).at(style);
  auto tokenizer = load_tokenizer(dir_ / style);
  EXPECT_EQ(tokenizer->vocab_size(), expected.at("vocab_size").get<int64_t>());
  EXPECT_EQ(tokenizer->special_ids().eos, tokenizer->token_id("<|endoftext|>"));
  EXPECT_EQ(tokenizer->special_ids().pad, tokenizer->token_id("<|endoftext|>"));
  EXPECT_EQ(tokenizer->special_ids().bos, -1);
  for (const auto& c : expected.at("cases")) {
    const std::string text = c.at("text").get<std::string>();
    const auto want = c.at("ids").get<std::vector<int64_t>>();
    const auto got = tokenizer->encode(text);
    EXPECT_EQ(got, want) << style << " text: \"" << text << "\"";
    EXPECT_EQ(tokenizer->decode(want, /*skip_special_tokens=*/false), c.at("decoded").get<std::string>())
        << text;
    EXPECT_EQ(tokenizer->decode(want, false), text) << "byte-level BPE must round-trip: " << text;
  }
}

INSTANTIATE_TEST_SUITE_P(Styles, BpeAgainstHfTokenizers,
                         ::testing::Values("gpt2_style", "qwen2_style", "llama3_style"));

TEST(Tokenizer, LoadingAMissingFileNamesIt) {
  ScratchDir dir("tok");
  try {
    load_tokenizer(dir.path());
    FAIL();
  } catch (const ModelError& e) {
    EXPECT_NE(std::string(e.what()).find("tokenizer.json"), std::string::npos) << e.what();
  }
}

TEST(Tokenizer, SpecialTokenTheVocabularyLacksNamesTokenizerConfig) {
  ScratchDir dir("tok");
  testing::write_file(dir.path() / "tokenizer.json", kHandWritten);
  testing::write_file(dir.path() / "tokenizer_config.json", R"({"eos_token": "</s>"})");
  try {
    load_tokenizer(dir.path());
    FAIL();
  } catch (const ModelError& e) {
    EXPECT_NE(std::string(e.what()).find("tokenizer_config.json"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("'eos_token' is '</s>'"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace rlwb::workers::model
