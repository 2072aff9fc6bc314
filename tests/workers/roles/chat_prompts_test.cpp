// tokenize_prompts with chat messages: a prompt that is a list of messages
// (verl's `prompt` column) goes through the tokenizer's chat template with
// the generation prompt and gets no extra bos; text prompts keep [bos] +
// text; messages without a template are an error that says why the
// tokenizer's template was refused, if it was.
#include <gtest/gtest.h>

#include "workers/model/char_tokenizer.h"
#include "workers/model/chat_template.h"
#include "workers/roles/model_setup.h"

namespace rlwb::workers::roles {
namespace {

const char* kTemplate =
    "{% for m in messages %}{{ m.role[0] }}:{{ m.content }}|{% endfor %}"
    "{% if add_generation_prompt %}a:{% endif %}";

std::vector<int64_t> row(const PromptIds& p, int64_t i) {
  std::vector<int64_t> out;
  for (int64_t j = 0; j < p.ids.size(1); ++j)
    if (p.mask[i][j].item<int64_t>()) out.push_back(p.ids[i][j].item<int64_t>());
  return out;
}

TEST(ChatPrompts, MessagePromptsAreRenderedByTheChatTemplateWithTheGenerationPrompt) {
  model::CharTokenizer tokenizer("ua:|xy");
  model::ChatTemplate chat(kTemplate, "tokenizer_config.json");
  const nlohmann::json messages = nlohmann::json::array({{{"role", "user"}, {"content", "xy"}}});
  const auto prompts = tokenize_prompts(tokenizer, {messages, nlohmann::json("xy")}, &chat);
  EXPECT_EQ(row(prompts, 0), tokenizer.encode("u:xy|a:"));
  std::vector<int64_t> text = {tokenizer.special_ids().bos};
  for (auto id : tokenizer.encode("xy")) text.push_back(id);
  EXPECT_EQ(row(prompts, 1), text);
}

TEST(ChatPrompts, MessagePromptsWithoutAChatTemplateAreAnError) {
  model::CharTokenizer tokenizer("ua:|xy");
  const nlohmann::json messages = nlohmann::json::array({{{"role", "user"}, {"content", "xy"}}});
  EXPECT_THROW(tokenize_prompts(tokenizer, {messages}), RoleConfigError);
  try {
    tokenize_prompts(tokenizer, {messages}, nullptr,
                     "tokenizer_config.json:3: the chat template uses macros");
    FAIL();
  } catch (const RoleConfigError& e) {
    EXPECT_NE(std::string(e.what()).find("cannot be rendered: tokenizer_config.json:3:"), std::string::npos)
        << e.what();
  }
  // Text prompts need no template.
  EXPECT_NO_THROW(tokenize_prompts(tokenizer, {nlohmann::json("xy")}, nullptr, "refused"));
}

}  // namespace
}  // namespace rlwb::workers::roles
