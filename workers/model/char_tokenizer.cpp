#include "workers/model/char_tokenizer.h"

#include <cstdio>

#include "workers/model/model_error.h"

namespace rlwb::workers::model {
namespace {

constexpr std::string_view kSpecialNames[] = {"<pad>", "<bos>", "<eos>"};

std::string describe(unsigned char c) {
  char buf[16];
  std::snprintf(buf, sizeof buf, "0x%02x", c);
  return (c >= 0x20 && c < 0x7f) ? "'" + std::string(1, static_cast<char>(c)) + "' (" + buf + ")"
                                 : std::string("byte ") + buf;
}

}  // namespace

CharTokenizer::CharTokenizer(std::string_view alphabet) : alphabet_(alphabet) {
  id_of_byte_.fill(-1);
  for (size_t i = 0; i < alphabet_.size(); ++i) {
    const auto c = static_cast<unsigned char>(alphabet_[i]);
    if (id_of_byte_[c] >= 0)
      throw ModelError("char tokenizer: character " + describe(c) + " appears twice in the alphabet");
    id_of_byte_[c] = 3 + static_cast<int64_t>(i);
  }
  special_ids_ = {kBos, kEos, kPad};
}

std::vector<int64_t> CharTokenizer::encode(std::string_view text) const {
  std::vector<int64_t> ids;
  ids.reserve(text.size());
  for (char ch : text) {
    const auto c = static_cast<unsigned char>(ch);
    if (id_of_byte_[c] < 0) {
      throw ModelError("char tokenizer: character " + describe(c) + " is not in the alphabet \"" + alphabet_ +
                       "\"");
    }
    ids.push_back(id_of_byte_[c]);
  }
  return ids;
}

std::string CharTokenizer::decode(const std::vector<int64_t>& ids, bool skip_special_tokens) const {
  std::string text;
  for (int64_t id : ids) {
    if (id < 0 || id >= vocab_size()) {
      throw ModelError("char tokenizer: id " + std::to_string(id) + " is outside [0, " +
                       std::to_string(vocab_size()) + ")");
    }
    if (id < 3) {
      if (!skip_special_tokens) text += kSpecialNames[id];
    } else {
      text += alphabet_[static_cast<size_t>(id - 3)];
    }
  }
  return text;
}

std::optional<int64_t> CharTokenizer::token_id(std::string_view token) const {
  for (int64_t i = 0; i < 3; ++i) {
    if (token == kSpecialNames[i]) return i;
  }
  if (token.size() == 1 && id_of_byte_[static_cast<unsigned char>(token[0])] >= 0) {
    return id_of_byte_[static_cast<unsigned char>(token[0])];
  }
  return std::nullopt;
}

}  // namespace rlwb::workers::model
