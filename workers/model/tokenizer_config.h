// TokenizerConfig: what a Hugging Face checkpoint's tokenizer_config.json
// and special_tokens_map.json say about special tokens, read the way
// transformers reads them: bos/eos/pad/unk (a string, or an object with
// "content"), additional_special_tokens / extra_special_tokens (every token
// listed there is special), and tokenizer_config.json's
// "added_tokens_decoder" ({"id": {"content": ..., "special": ...}}), the
// added tokens of a tokenizer that has no tokenizer.json. A name set in
// tokenizer_config.json wins; special_tokens_map.json fills the others.
// load_tokenizer() (tokenizer.h) reads it for both kinds of tokenizer.
#pragma once

#include <filesystem>
#include <string>
#include <vector>

#include "workers/model/added_tokens.h"

namespace rlwb::workers::model {

struct TokenizerConfig {
  std::string bos, eos, pad, unk;    // token text; "" where not named
  std::vector<std::string> special;  // every token named special, the four above included
  std::vector<AddedToken> added;     // added_tokens_decoder, in file order
  std::string source;                // the files read, for messages ("" when none exists)
};

// Reads dir/tokenizer_config.json and dir/special_tokens_map.json where they
// exist. Throws ModelError naming the file for JSON that does not parse or
// an entry of the wrong shape.
TokenizerConfig read_tokenizer_config(const std::filesystem::path& dir);

}  // namespace rlwb::workers::model
