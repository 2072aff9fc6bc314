// Where the tests find the source tree and the built programs. The values
// are in one generated file (build/tests/test_paths.cpp, written by
// tests/CMakeLists.txt), not in -D definitions on every test's command
// line: so no test file is compiled with the checkout's absolute path, a
// test file compiles to the same object in every clone, and ccache serves
// a fresh clone's build of the tests.
#pragma once

#include <cstdlib>
#include <string>

namespace rlwb::testing {

extern const char* const kSourceDir;   // the checkout's root
extern const char* const kWorkerBin;   // rlwb-worker
extern const char* const kCliBin;      // rlwb
extern const char* const kSandboxBin;  // rlwb-sandbox; "" when it is not built
extern const char* const kGuiBin;      // rlwb-gui; "" when it is not built
extern const char* const kBenchDir;    // the built benchmarks (bench_generate, ...)

// The Python with the reference packages (scripts/python-requirements.txt):
// $RLWB_PYTHON, else the venv scripts/setup.sh makes under $RLWB_HOME.
inline std::string reference_python() {
  if (const char* p = std::getenv("RLWB_PYTHON")) return p;
  const char* home = std::getenv("RLWB_HOME");
  const char* user = std::getenv("HOME");
  return (home ? std::string(home) : std::string(user ? user : "/root") + "/.local/share/rlwb") +
         "/venv/bin/python";
}

}  // namespace rlwb::testing
