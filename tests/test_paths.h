// Where the tests find the source tree and the built programs. The values
// are in one generated file (build/tests/test_paths.cpp, written by
// tests/CMakeLists.txt), not in -D definitions on every test's command
// line: so no test file is compiled with the checkout's absolute path, a
// test file compiles to the same object in every clone, and ccache serves
// a fresh clone's build of the tests.
#pragma once

namespace rlwb::testing {

extern const char* const kSourceDir;   // the checkout's root
extern const char* const kWorkerBin;   // rlwb-worker
extern const char* const kCliBin;      // rlwb
extern const char* const kSandboxBin;  // rlwb-sandbox; "" when it is not built
extern const char* const kGuiBin;      // rlwb-gui; "" when it is not built

}  // namespace rlwb::testing
