// The languages the sandbox runs, and how: the source file name in the work
// directory, the compile command (C, C++) and the run command. Interpreters
// are Debian's system ones by absolute path (/usr/bin/python3, not the pyenv
// shim that may come first on PATH: the shim costs ~250 ms per start).
// Used by the executor front (program_runner.h) and the command line.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace rlwb::sandbox {

enum class Language { python3, bash, c, cpp };

// "python3" (or "python", "py"), "bash" (or "sh"), "c", "cpp" (or "c++", "cxx").
// Throws SandboxError: "unknown language 'x': use python3, bash, c or cpp".
Language parse_language(std::string_view name);
const char* language_name(Language lang);  // canonical: python3, bash, c, cpp

struct LanguageSpec {
  std::string source_file;                // name in the work directory
  std::vector<std::string> compile_argv;  // empty for interpreted languages
  std::string binary_file;                // what the compile step leaves behind
  std::vector<std::string> run_argv;      // run command (absolute paths)
};
const LanguageSpec& language_spec(Language lang);
inline bool is_compiled(Language lang) { return lang == Language::c || lang == Language::cpp; }

// Work directory inside the sandbox (a private tmpfs; cwd, HOME and TMPDIR).
inline constexpr const char* kWorkDir = "/tmp";

}  // namespace rlwb::sandbox
