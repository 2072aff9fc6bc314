// Shared helpers of the model tests: a tiny config, scratch directories, and
// running tests/workers/model/hf_reference.py with the RLWB venv's python.
#pragma once

#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/file.h>
#include <unistd.h>

#include <array>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include <ATen/record_function.h>
#include <torch/torch.h>

#include "workers/model/transformer_config.h"
#include "tests/test_paths.h"

namespace rlwb::workers::model::testing {

namespace fs = std::filesystem;

inline TransformerConfig tiny_config(Architecture architecture = Architecture::kLlama) {
  TransformerConfig c;
  c.architecture = architecture;
  c.vocab_size = 64;
  c.hidden_size = 32;
  c.intermediate_size = 80;
  c.num_layers = 2;
  c.num_heads = 4;
  c.num_kv_heads = 2;
  c.max_position_embeddings = 96;
  c.rope_theta = 500.0;
  c.qkv_bias = architecture == Architecture::kQwen2;
  c.initializer_range = 0.2;  // large enough that greedy paths are not near-ties
  return c;
}

// got and want have one shape and differ nowhere by more than `tolerance`
// (compared on the host, so either may live on a GPU).
inline void expect_close(const torch::Tensor& got, const torch::Tensor& want, double tolerance,
                         const std::string& what) {
  ASSERT_EQ(got.sizes(), want.sizes()) << what;
  EXPECT_LE((got.cpu() - want.cpu()).abs().max().item<double>(), tolerance) << what;
}

// The batch sizes the token embedding saw while this is alive, on this
// thread: one entry per model pass (a shared-prompt pass, a response pass,
// whole rows, a decoding step).
class EmbeddingRowsSeen {
 public:
  EmbeddingRowsSeen() {
    rows().clear();
    handle_ = at::addThreadLocalCallback(
        at::RecordFunctionCallback([](const at::RecordFunction& fn) -> std::unique_ptr<at::ObserverContext> {
          if (std::string(fn.name()) == "aten::embedding") {
            auto inputs = fn.inputs();
            if (inputs.size() >= 2 && inputs[1].isTensor()) rows().push_back(inputs[1].toTensor().size(0));
          }
          return nullptr;
        }).needsInputs(true));
  }
  ~EmbeddingRowsSeen() { at::removeCallback(handle_); }
  static std::vector<int64_t>& rows() {
    static thread_local std::vector<int64_t> seen;
    return seen;
  }

 private:
  at::CallbackHandle handle_;
};

// A fresh directory under $TMPDIR, removed by the destructor.
class ScratchDir {
 public:
  explicit ScratchDir(const std::string& tag) {
    const char* base = std::getenv("TMPDIR");
    std::string pattern = std::string(base ? base : "/tmp") + "/rlwb-" + tag + "-XXXXXX";
    std::vector<char> buf(pattern.begin(), pattern.end());
    buf.push_back('\0');
    if (::mkdtemp(buf.data()) == nullptr) throw std::runtime_error("mkdtemp failed for " + pattern);
    path_ = buf.data();
  }
  ~ScratchDir() {
    std::error_code ec;
    fs::remove_all(path_, ec);
  }
  const fs::path& path() const { return path_; }

 private:
  fs::path path_;
};

inline std::string read_file(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

inline void write_file(const fs::path& p, const std::string& text) {
  std::ofstream out(p, std::ios::binary | std::ios::trunc);
  out << text;
}

// The python that has torch + transformers: $RLWB_PYTHON, else the venv of
// scripts/setup.sh ($RLWB_HOME or ~/.local/share/rlwb).
using rlwb::testing::reference_python;

struct PythonRun {
  int exit_code = -1;
  std::string output;
};

// Runs tests/workers/model/<script> (hf_reference.py unless named) with
// args; stdout and stderr together in output.
inline PythonRun run_reference_script(const std::vector<std::string>& args,
                                      const std::string& script = "hf_reference.py") {
  std::string cmd = "'" + reference_python() + "' '" + std::string(rlwb::testing::kSourceDir) +
                    "/tests/workers/model/" + script + "'";
  for (const auto& a : args) cmd += " '" + a + "'";
  cmd += " 2>&1";
  PythonRun run;
  FILE* pipe = ::popen(cmd.c_str(), "r");
  if (pipe == nullptr) {
    run.output = "popen failed for: " + cmd;
    return run;
  }
  std::array<char, 4096> buf{};
  size_t n;
  while ((n = std::fread(buf.data(), 1, buf.size(), pipe)) > 0) run.output.append(buf.data(), n);
  const int status = ::pclose(pipe);
  run.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return run;
}

// Fails the test loudly (also in CI) when the Python side is missing.
#define RLWB_EXPECT_REFERENCE_RAN(run)                                                                       \
  ASSERT_EQ((run).exit_code, 0)                                                                              \
      << "\n*** The Hugging Face reference (tests/workers/model/hf_reference.py) did not run. It needs the " \
         "pinned "                                                                                           \
         "packages of scripts/python-requirements.txt in "                                                   \
      << ::rlwb::workers::model::testing::reference_python()                                                 \
      << " (scripts/setup.sh installs them). This test FAILS without them. Output:\n"                        \
      << (run).output

// Output of `hf_reference.py <command> DIR` (or, with a script named,
// `<script> DIR`), made once per machine and reused by every test process
// (ctest runs each test alone): cached under $TMPDIR keyed by the script's
// and the requirements' text, built under a file lock so parallel tests do
// not race.
inline fs::path cached_reference(const std::string& command, PythonRun* run_out,
                                 const std::string& script = "hf_reference.py") {
  const std::string key =
      read_file(std::string(rlwb::testing::kSourceDir) + "/tests/workers/model/" + script) +
      read_file(std::string(rlwb::testing::kSourceDir) + "/scripts/python-requirements.txt") +
      reference_python();
  const char* base = std::getenv("TMPDIR");
  const fs::path dir = fs::path(base ? base : "/tmp") /
                       ("rlwb-hf-reference-" + command + "-" + std::to_string(std::hash<std::string>{}(key)));
  const fs::path done = dir / "DONE";
  fs::create_directories(dir.parent_path());
  const std::string lock_path = dir.string() + ".lock";
  int fd = ::open(lock_path.c_str(), O_CREAT | O_RDWR, 0644);
  if (fd >= 0) ::flock(fd, LOCK_EX);
  run_out->exit_code = 0;
  if (!fs::exists(done)) {
    std::error_code ec;
    fs::remove_all(dir, ec);
    fs::create_directories(dir);
    *run_out = script == "hf_reference.py" ? run_reference_script({command, dir.string()})
                                           : run_reference_script({dir.string()}, script);
    if (run_out->exit_code == 0) write_file(done, run_out->output);
  }
  if (fd >= 0) {
    ::flock(fd, LOCK_UN);
    ::close(fd);
  }
  return dir;
}

}  // namespace rlwb::workers::model::testing
