// ChatTemplate against transformers' apply_chat_template:
// chat_template_reference.py writes the Llama 3.1 Instruct, Qwen2.5
// Instruct and ChatML templates into tokenizer_config.json files and the
// strings transformers renders for a set of conversations, with and
// without the generation prompt, and a dozen small templates for the rest
// of the subset; each must render to the identical string here. The
// other tests pin how the subset refuses what it does not cover.
#include "workers/model/chat_template.h"

#include <gtest/gtest.h>

#include <fstream>
#include <iostream>
#include <map>

#include "tests/workers/model/model_test_support.h"
#include "workers/model/model_error.h"

namespace rlwb::workers::model {
namespace {

using Json = nlohmann::ordered_json;

class ChatTemplateParity : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    dir_ = testing::cached_reference("chat-templates", &run_, "chat_template_reference.py");
  }
  static std::filesystem::path dir_;
  static testing::PythonRun run_;
};
std::filesystem::path ChatTemplateParity::dir_;
testing::PythonRun ChatTemplateParity::run_;

TEST_F(ChatTemplateParity, LlamaQwenAndChatMlRenderAsTransformersDoes) {
  RLWB_EXPECT_REFERENCE_RAN(run_);
  std::map<std::string, ChatTemplate> templates;
  std::ifstream in(dir_ / "cases.jsonl", std::ios::binary);
  ASSERT_TRUE(in) << dir_ / "cases.jsonl";
  size_t compared = 0, mismatches = 0;
  std::map<std::string, size_t> per_template;
  std::string line;
  while (std::getline(in, line)) {
    const auto row = Json::parse(line);
    const std::string name = row.at("template").get<std::string>();
    if (name == "subset") {  // a small template of its own, given inline
      templates.erase(name);
      templates.emplace(
          name, ChatTemplate(row.at("source").get<std::string>(), row.at("conversation").get<std::string>()));
    } else if (!templates.count(name)) {
      auto loaded = load_chat_template(dir_ / name);
      ASSERT_TRUE(loaded.has_value()) << name << ": no chat template found in " << dir_ / name;
      templates.emplace(name, std::move(*loaded));
    }
    const bool generation_prompt = row.at("add_generation_prompt").get<bool>();
    const std::string want = row.at("text").get<std::string>();
    std::string got;
    try {
      got = templates.at(name).render(row.at("messages"), generation_prompt, row.value("tools", Json()));
    } catch (const std::exception& e) {
      got = std::string("<error> ") + e.what();
    }
    ++compared;
    ++per_template[name];
    if (got == want) continue;
    ++mismatches;
    ADD_FAILURE() << name << " / " << row.at("conversation").get<std::string>()
                  << " / add_generation_prompt=" << generation_prompt
                  << "\n  transformers: " << Json(want).dump() << "\n  RLWB:         " << Json(got).dump();
  }
  std::cout << "compared " << compared << " renderings with transformers (";
  for (const auto& [name, n] : per_template) std::cout << name << " " << n << ", ";
  std::cout << "), " << mismatches << " differ\n";
  EXPECT_EQ(per_template.size(), 4u);
  EXPECT_GE(compared, 100u);
  EXPECT_EQ(mismatches, 0u);
}

std::string error_of(const std::string& source, const Json& messages = Json::array()) {
  try {
    ChatTemplate(source, "tokenizer_config.json").render(messages, false);
  } catch (const ModelError& e) {
    return e.what();
  }
  return "";
}

TEST(ChatTemplate, UnsupportedConstructsAreRefusedByNameAndFile) {
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"{% macro f() %}x{% endmacro %}", "the statement '{% macro %}'"},
      {"{{ messages | wordcount }}", "the filter 'wordcount'"},
      {"{{ x is divisibleby(3) }}", "the test 'is divisibleby'"},
      {"{{ s.strip() }}", "the method call '.strip()'"},
      {"{% set ns = namespace(a=1) %}", "the function 'namespace()'"},
      {"{% set ns.a = 1 %}", "assigning to an attribute"},
      {"{%+ if x %}{% endif %}", "'{%+'"},
      {"{{ {'a': 1} }}", "dict literals"},
  };
  for (const auto& [source, construct] : cases) {
    const std::string message = error_of(source);
    EXPECT_NE(message.find("tokenizer_config.json:1:"), std::string::npos) << source << " -> " << message;
    EXPECT_NE(message.find(construct), std::string::npos) << source << " -> " << message;
    EXPECT_NE(message.find("does not support"), std::string::npos) << source << " -> " << message;
  }
}

TEST(ChatTemplate, RenderTimeErrorsNameTheFileAndLine) {
  EXPECT_NE(error_of("\n{{ raise_exception('no system message') }}")
                .find("tokenizer_config.json:2: the chat template raised an error: no system message"),
            std::string::npos);
  EXPECT_NE(error_of("{{ messages[0].content.x }}", Json::array()).find("of an undefined value"),
            std::string::npos);
  EXPECT_NE(error_of("{{ messages }}").find("printing a list"), std::string::npos);
  EXPECT_NE(error_of("{% if x %}").find("ends before '{% endif %}'"), std::string::npos);
}

TEST(ChatTemplate, LoadsChatTemplateJinjaBeforeTokenizerConfig) {
  testing::ScratchDir dir("chat-template");
  testing::write_file(dir.path() / "tokenizer_config.json",
                      R"({"bos_token": {"content": "<s>"}, "chat_template": "config"})");
  auto from_config = load_chat_template(dir.path() / "tokenizer.json");
  ASSERT_TRUE(from_config.has_value());
  EXPECT_EQ(from_config->render(Json::array(), false), "config");
  testing::write_file(dir.path() / "chat_template.jinja", "{{ bos_token }}{{ messages | length }}\n");
  auto from_file = load_chat_template(dir.path());
  ASSERT_TRUE(from_file.has_value());
  EXPECT_EQ(from_file->render(Json::array({Json{{"role", "user"}, {"content", "x"}}}), false), "<s>1");
  testing::ScratchDir empty("chat-template-none");
  EXPECT_FALSE(load_chat_template(empty.path()).has_value());
}

}  // namespace
}  // namespace rlwb::workers::model
