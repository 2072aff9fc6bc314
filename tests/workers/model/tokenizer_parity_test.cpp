// BpeTokenizer against the Hugging Face `tokenizers` library, line by line:
// tokenizer_corpus.py trains GPT-2, Qwen2 and Llama 3 style tokenizers (and
// two that cover added-token flags and every Split behavior) and writes a
// corpus of more than 10,000 lines in many scripts with the library's ids
// and decodings; every line must encode to the same ids and decode to the
// same text, with and without special tokens.
#include <gtest/gtest.h>

#include <fstream>
#include <iostream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "tests/workers/model/model_test_support.h"
#include "workers/model/bpe_tokenizer.h"

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

TEST_P(BpeParityWithHfTokenizers, EveryCorpusLineEncodesAndDecodesAsTheLibraryDoes) {
  RLWB_EXPECT_REFERENCE_RAN(run_);
  const std::string style = GetParam();
  const auto path = dir_ / style / "tokenizer.json";
  BpeTokenizer tokenizer(testing::read_file(path), path.string());
  std::ifstream in(dir_ / "corpus.jsonl", std::ios::binary);
  ASSERT_TRUE(in) << dir_ / "corpus.jsonl";
  size_t compared = 0, mismatches = 0;
  std::string line;
  while (std::getline(in, line)) {
    const auto row = nlohmann::json::parse(line);
    const std::string text = row.at("text").get<std::string>();
    const auto& want = row.at(style);
    const auto want_ids = want.at("ids").get<std::vector<int64_t>>();
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
    const bool same = error.empty() && got == want_ids && kept == want.at("decoded").get<std::string>() &&
                      skipped == want.at("decoded_skip").get<std::string>();
    if (same) continue;
    if (++mismatches <= 20) {
      ADD_FAILURE() << style << " line " << compared << ": " << nlohmann::json(text).dump()
                    << "\n  HF ids:   " << ids_text(want_ids)
                    << "\n  RLWB ids: " << (error.empty() ? ids_text(got) : error)
                    << "\n  HF decode:   " << want.at("decoded").dump() << " / "
                    << want.at("decoded_skip").dump() << "\n  RLWB decode: " << nlohmann::json(kept).dump()
                    << " / " << nlohmann::json(skipped).dump();
    }
  }
  std::cout << style << ": compared " << compared << " lines with HF tokenizers, " << mismatches
            << " differ\n";
  EXPECT_GE(compared, 10000u);
  EXPECT_EQ(mismatches, 0u);
}

INSTANTIATE_TEST_SUITE_P(Styles, BpeParityWithHfTokenizers,
                         ::testing::Values("gpt2", "qwen2", "llama3", "flags", "behaviors"));

}  // namespace
}  // namespace rlwb::workers::model
