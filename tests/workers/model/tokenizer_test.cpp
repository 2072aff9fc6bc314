// Tokenizers: the built-in character tokenizer, byte-level BPE on a
// hand-written tokenizer.json, the pre-tokenizer (patterns, Split
// behaviors, Oniguruma escapes), added-token flags, UTF-8 handling, and
// agreement with the HF `tokenizers` library on a few texts (the large
// corpus is tokenizer_parity_test.cpp's).
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "tests/workers/model/model_test_support.h"
#include "workers/model/bpe_tokenizer.h"
#include "workers/model/char_tokenizer.h"
#include "workers/model/hf_pretokenizer.h"
#include "workers/model/model_error.h"
#include "workers/model/unicode_text.h"

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
  "decoder": {"type": "ByteLevel"},
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
}

nlohmann::json with_split_pattern(const std::string& pattern) {
  nlohmann::json j = nlohmann::json::parse(kHandWritten);
  j["pre_tokenizer"] = {{"type", "Sequence"},
                        {"pretokenizers",
                         {{{"type", "Split"}, {"pattern", {{"Regex", pattern}}}, {"behavior", "Isolated"}},
                          {{"type", "ByteLevel"}, {"add_prefix_space", false}, {"use_regex", false}}}}};
  return j;
}

std::string error_of(const std::string& json) {
  try {
    BpeTokenizer(json, "t.json");
  } catch (const ModelError& e) {
    return e.what();
  }
  return "";
}

TEST(BpePretokenizer, AnySplitPatternRunsAndOneThatDoesNotCompileIsNamed) {
  BpeTokenizer t(with_split_pattern("\\w+|\\s").dump(), "t.json");
  EXPECT_EQ(t.pretokenize("héllo wörld_1"), (std::vector<std::string>{"héllo", " ", "wörld_1"}));
  const std::string error = error_of(with_split_pattern("(unclosed").dump());
  EXPECT_NE(error.find("t.json"), std::string::npos) << error;
  EXPECT_NE(error.find("'(unclosed'"), std::string::npos) << error;
}

TEST(BpeTokenizer, AnUnsupportedNormalizerOrDecoderIsRefusedByName) {
  nlohmann::json j = nlohmann::json::parse(kHandWritten);
  j["normalizer"] = {{"type", "Sequence"}, {"normalizers", {{{"type", "NFC"}}, {{"type", "Lowercase"}}}}};
  EXPECT_NE(error_of(j.dump()).find("normalizer 'Lowercase'"), std::string::npos) << error_of(j.dump());
  j = nlohmann::json::parse(kHandWritten);
  j["decoder"] = {{"type", "WordPiece"}};
  EXPECT_NE(error_of(j.dump()).find("decoder 'WordPiece'"), std::string::npos) << error_of(j.dump());
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

// Expected pieces as the library (tokenizers 0.23) splits "the-final--countdown" on "-".
TEST(BpePretokenizer, SplitBehaviorsAndInvertCutAsTheLibraryDoes) {
  auto pieces = [](const std::string& behavior, bool invert) {
    nlohmann::json j = nlohmann::json::parse(kHandWritten);
    j["pre_tokenizer"] = {
        {"type", "Sequence"},
        {"pretokenizers",
         {{{"type", "Split"}, {"pattern", {{"String", "-"}}}, {"behavior", behavior}, {"invert", invert}},
          {{"type", "ByteLevel"}, {"add_prefix_space", false}, {"use_regex", false}}}}};
    return BpeTokenizer(j.dump(), "t.json").pretokenize("the-final--countdown");
  };
  using V = std::vector<std::string>;
  EXPECT_EQ(pieces("Isolated", false), (V{"the", "-", "final", "-", "-", "countdown"}));
  EXPECT_EQ(pieces("Removed", false), (V{"the", "final", "countdown"}));
  EXPECT_EQ(pieces("Removed", true), (V{"-", "-", "-"}));
  EXPECT_EQ(pieces("MergedWithPrevious", false), (V{"the-", "final-", "-", "countdown"}));
  EXPECT_EQ(pieces("MergedWithNext", false), (V{"the", "-final", "-", "-countdown"}));
  EXPECT_EQ(pieces("Contiguous", false), (V{"the", "-", "final", "--", "countdown"}));
}

TEST(BpePretokenizer, OnigurumaEscapesAreRewrittenForPcre2) {
  // \s is White_Space (PCRE2 alone would also take U+180E), \h a hex digit, \uHHHH a code point.
  EXPECT_EQ(oniguruma_to_pcre2("\\h\\u00e9"), "[0-9a-fA-F]\\x{00e9}");
  EXPECT_NE(oniguruma_to_pcre2("[^\\s\\p{L}]").find("[^\\x{9}-\\x{d}"), std::string::npos);
  EXPECT_EQ(oniguruma_to_pcre2("\\p{N}{1,3}|[\\d\\-]|\\Q\\s\\E"), "\\p{N}{1,3}|[\\d\\-]|\\Q\\s\\E");
  EXPECT_THROW(oniguruma_to_pcre2("[\\S]"), std::invalid_argument);
  EXPECT_THROW(oniguruma_to_pcre2("[a-z&&[^aeiou]]"), std::invalid_argument);
  BpeTokenizer t(with_split_pattern("\\s").dump(), "t.json");
  EXPECT_EQ(t.pretokenize("a\xe1\xa0\x8e"
                          "b\xc2\x85"
                          "c"),
            (std::vector<std::string>{"a\xe1\xa0\x8e"
                                      "b",
                                      "\xc2\x85", "c"}));
}

TEST(BpeTokenizer, AddedTokensStripWhiteSpaceAndMatchSingleWordsAsAsked) {
  nlohmann::json j = nlohmann::json::parse(kHandWritten);
  j["added_tokens"].push_back(
      {{"id", 16}, {"content", "<m>"}, {"lstrip", true}, {"rstrip", true}, {"special", true}});
  j["added_tokens"].push_back({{"id", 17}, {"content", "ow"}, {"single_word", true}});
  BpeTokenizer t(j.dump(), "t.json");
  // The spaces on both sides belong to <m>; "world" then has no Ġ.
  EXPECT_EQ(t.encode("hello  <m>  world"), (std::vector<int64_t>{11, 16, 5, 13, 2, 7}));
  EXPECT_EQ(t.decode(t.encode("hello  <m>  world"), false), "hello<m>world");
  EXPECT_EQ(t.decode(t.encode("hello  <m>  world"), true), "helloworld");
  EXPECT_EQ(t.encode("ow"), (std::vector<int64_t>{17}));
  EXPECT_EQ(t.encode("hello ow"), (std::vector<int64_t>{11, 4, 17}));
  EXPECT_EQ(t.encode("how"), (std::vector<int64_t>{0, 3, 5}));  // inside a word: not the token
}

TEST(BpeTokenizer, TextThatIsNotUtf8IsAnErrorAndDecodingReplacesBrokenBytes) {
  BpeTokenizer t(kHandWritten, "hand.json");
  try {
    t.encode("he\xffllo");
    FAIL();
  } catch (const ModelError& e) {
    EXPECT_NE(std::string(e.what()).find("byte 2"), std::string::npos) << e.what();
  }
  // What Rust's from_utf8_lossy (and Python's 'replace') give: one U+FFFD per maximal ill-formed subpart.
  EXPECT_EQ(unicode::valid_utf8_lossy("\xf0\x9f\x98"), "\xef\xbf\xbd");
  EXPECT_EQ(unicode::valid_utf8_lossy("\xc0\xaf"), "\xef\xbf\xbd\xef\xbf\xbd");
  EXPECT_EQ(unicode::valid_utf8_lossy("a\xed\xa0\x80"
                                      "b"),
            "a\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd"
            "b");
  EXPECT_EQ(unicode::valid_utf8_lossy("\xe2\x82x"), "\xef\xbf\xbdx");
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
