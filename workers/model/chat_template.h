// ChatTemplate: the Jinja `chat_template` of a Hugging Face tokenizer,
// rendered in C++ to the same string as transformers'
// `apply_chat_template(messages, tokenize=False, add_generation_prompt=...)`.
//
// Debian packages no Jinja engine for C++ (bookworm has no inja, and inja's
// language is not Jinja's), so this is a subset of Jinja written here, enough
// for the Llama 3.1 Instruct, Qwen2.5 Instruct and ChatML templates; the
// parity test (tests/workers/model/chat_template_test.cpp) renders those
// three against transformers. The template is parsed once, in the
// constructor: any construct outside the subset is a ModelError naming the
// construct, the file and the line, never output that might be wrong.
//
// The subset, with transformers' environment settings (trim_blocks,
// lstrip_blocks, no trailing newline kept, no autoescape):
//   - text, {{ expr }}, {% stmt %}, {# comment #}, and `-` on either side;
//   - statements: if / elif / else, for x in ... (also `for k, v in`, with
//     `else`, loop.index, index0, revindex, revindex0, first, last, length),
//     break, continue, set name = expr, generation / endgeneration (rendered
//     as their body);
//   - expressions: string, integer, true/false/none literals, [lists],
//     names, a.b, a[k], a[i:j:k], + - * / // % ~, == != < <= > >=, in,
//     not in, and, or, not, `x if c else y`, raise_exception(msg);
//   - tests: defined, undefined, none, string, number, integer, boolean,
//     mapping, iterable, sequence, true, false, equalto/eq, odd, even;
//   - filters: trim (Python's str.strip), length/count, string, first, last,
//     list, items, join, default/d, select/reject (with a test), tojson
//     (Python's json.dumps spacing, ensure_ascii off, optional indent).
// Values follow Jinja's: an undefined name prints as "" and is falsy;
// attribute or index of an undefined value is an error. Not supported
// (refused by name): macros, namespaces, blocks, includes, raw, calls of
// methods (`s.strip()`), filters and tests not listed, printing a list or
// mapping.
//
// Used by the roles to turn a list of chat messages into prompt text.
#pragma once

#include <filesystem>
#include <memory>
#include <optional>
#include <string>

#include <nlohmann/json.hpp>

namespace rlwb::workers::model {

class ChatTemplate {
 public:
  // `source` is the template text, `origin` names where it came from (the
  // file) in every error. `variables` are defined for every render
  // (bos_token, eos_token, ... as transformers passes them).
  ChatTemplate(const std::string& source, std::string origin, nlohmann::ordered_json variables = {});
  ~ChatTemplate();
  ChatTemplate(ChatTemplate&&) noexcept;
  ChatTemplate& operator=(ChatTemplate&&) noexcept;

  // messages: a JSON array of {"role": ..., "content": ...} objects (an
  // assistant message may carry "tool_calls", a "tool" message answers).
  // tools: null (none, as transformers passes it when the call names none)
  // or a JSON array of function schemas; `documents` is always none.
  // Throws ModelError for a render-time error (undefined attribute,
  // raise_exception, a type the operation does not take).
  std::string render(const nlohmann::ordered_json& messages, bool add_generation_prompt,
                     const nlohmann::ordered_json& tools = nullptr) const;

  const std::string& origin() const { return origin_; }

  struct Node;

 private:
  std::string origin_;
  nlohmann::ordered_json variables_;
  std::unique_ptr<Node> root_;
};

// The chat template next to a tokenizer: `path` is a directory or the
// tokenizer.json in it. Reads chat_template.jinja if present (newer
// transformers saves it there), else the "chat_template" of
// tokenizer_config.json (a string, or a list of {name, template} of which
// "default" is taken); bos/eos/unk/pad/sep/cls/mask tokens become variables.
// nullopt when the directory has no template.
std::optional<ChatTemplate> load_chat_template(const std::filesystem::path& path);

}  // namespace rlwb::workers::model
