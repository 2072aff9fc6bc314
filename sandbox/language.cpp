#include "sandbox/language.h"

#include "sandbox/sandbox_error.h"

namespace rlwb::sandbox {

Language parse_language(std::string_view name) {
  if (name == "python3" || name == "python" || name == "py") return Language::python3;
  if (name == "bash" || name == "sh") return Language::bash;
  if (name == "c") return Language::c;
  if (name == "cpp" || name == "c++" || name == "cxx") return Language::cpp;
  throw SandboxError("unknown language '" + std::string(name) + "': use python3, bash, c or cpp");
}

const char* language_name(Language lang) {
  switch (lang) {
    case Language::python3:
      return "python3";
    case Language::bash:
      return "bash";
    case Language::c:
      return "c";
    case Language::cpp:
      return "cpp";
  }
  return "?";
}

const LanguageSpec& language_spec(Language lang) {
  // -E -s: ignore PYTHON* variables and the user site directory, as a
  // system service should; the script's directory is sys.path[0] as usual.
  static const LanguageSpec python3{"main.py", {}, "", {"/usr/bin/python3", "-E", "-s", "/tmp/main.py"}};
  static const LanguageSpec bash{"main.sh", {}, "", {"/bin/bash", "/tmp/main.sh"}};
  static const LanguageSpec c{"main.c",
                              {"/usr/bin/gcc", "-O2", "-std=gnu17", "-pipe", "-o", "main", "main.c", "-lm"},
                              "main",
                              {"/tmp/main"}};
  static const LanguageSpec cpp{"main.cpp",
                                {"/usr/bin/g++", "-O2", "-std=gnu++17", "-pipe", "-o", "main", "main.cpp"},
                                "main",
                                {"/tmp/main"}};
  switch (lang) {
    case Language::python3:
      return python3;
    case Language::bash:
      return bash;
    case Language::c:
      return c;
    case Language::cpp:
      return cpp;
  }
  return python3;
}

}  // namespace rlwb::sandbox
