#include "workers/model/added_tokens.h"

#include <algorithm>
#include <nlohmann/json.hpp>

#include "workers/model/model_error.h"
#include "workers/model/unicode_text.h"

namespace rlwb::workers::model {

AddedToken added_token_from_json(const nlohmann::json& entry, int64_t id, const std::string& where) {
  if (!entry.is_object() || !entry.contains("content") || !entry.at("content").is_string() ||
      entry.at("content").get<std::string>().empty()) {
    throw ModelError(where + ": the added token with id " + std::to_string(id) +
                     " has no 'content' (a non-empty string)");
  }
  AddedToken a;
  a.content = entry.at("content").get<std::string>();
  a.id = id;
  a.special = entry.value("special", false);
  a.single_word = entry.value("single_word", false);
  a.lstrip = entry.value("lstrip", false);
  a.rstrip = entry.value("rstrip", false);
  a.normalized = entry.value("normalized", !a.special);
  return a;
}

AddedTokens::AddedTokens(std::vector<AddedToken> tokens) : tokens_(std::move(tokens)) {
  // Longest first, so that the first hit at a position is the longest.
  std::stable_sort(tokens_.begin(), tokens_.end(),
                   [](const AddedToken& a, const AddedToken& b) { return a.match.size() > b.match.size(); });
  for (size_t k = 0; k < tokens_.size(); ++k) {
    if (!tokens_[k].match.empty())
      by_first_byte_[static_cast<unsigned char>(tokens_[k].match[0])].push_back(k);
  }
}

const AddedToken* AddedTokens::find(std::string_view content) const {
  for (const auto& t : tokens_) {
    if (t.content == content) return &t;
  }
  return nullptr;
}

std::vector<AddedTokens::Segment> AddedTokens::cut(std::string_view text) const {
  std::vector<Segment> out;
  if (tokens_.empty()) {
    if (!text.empty()) out.push_back({0, text.size(), -1});
    return out;
  }
  size_t done = 0;  // end of what is already in out
  size_t i = 0;
  while (i < text.size()) {
    const AddedToken* hit = nullptr;
    for (size_t k : by_first_byte_[static_cast<unsigned char>(text[i])]) {  // longest first
      if (text.compare(i, tokens_[k].match.size(), tokens_[k].match) == 0) {
        hit = &tokens_[k];
        break;
      }
    }
    if (hit == nullptr) {
      ++i;
      continue;
    }
    size_t begin = i, end = i + hit->match.size();
    i = end;  // the next match starts after this one, whatever the stripping below takes
    if (hit->single_word) {
      const bool word_before =
          begin > 0 && unicode::is_word_char(unicode::last_char(text.substr(0, begin)).cp);
      const bool word_after = end < text.size() && unicode::is_word_char(unicode::char_at(text, end).cp);
      if (word_before || word_after) continue;
    }
    if (hit->lstrip) {
      while (begin > 0) {
        const auto c = unicode::last_char(text.substr(0, begin));
        if (!unicode::is_white_space(c.cp)) break;
        begin = c.begin;
      }
      begin = std::max(begin, done);  // white space an earlier token took stays with it
    }
    if (hit->rstrip) {
      while (end < text.size()) {
        const auto c = unicode::char_at(text, end);
        if (!unicode::is_white_space(c.cp)) break;
        end = c.end;
      }
    }
    if (done < begin) out.push_back({done, begin, -1});
    out.push_back({begin, end, hit->id});
    done = end;
  }
  if (done < text.size()) out.push_back({done, text.size(), -1});
  return out;
}

}  // namespace rlwb::workers::model
