// One execution as the executor sees it: a command line, the files to put
// in the fresh work directory, stdin, limits -- and what came of it, before
// any interpretation (classify.h turns an ExecResult into a Verdict).
// Serialised between an executor's owner and the executor process.
// Used by executor.h, classify.h and program_runner.h.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "sandbox/fd_channel.h"
#include "sandbox/limits.h"

namespace rlwb::sandbox {

struct ExecFile {
  std::string name;  // plain file name in the work directory (no '/')
  std::string data;
  bool executable = false;
};

struct ExecJob {
  std::vector<std::string> argv;  // argv[0]: absolute path inside the sandbox
  std::vector<ExecFile> files;
  std::string stdin_data;
  Limits limits;
  std::string collect;  // after exit 0, bring this work-dir file back (compile output)
  // argv is python3 running /tmp/main.py: a pre-started interpreter may serve it.
  bool python_main = false;
};

// Why the sandbox stopped the program, if it did.
enum class StopReason { none, wall, cpu, memory, output };
const char* stop_reason_name(StopReason r);

struct ExecResult {
  bool started = false;       // the program was exec'd
  std::string sandbox_error;  // non-empty: the sandbox failed (the program's fate is unknown)
  int exec_errno = 0;         // execve of argv[0] failed with this errno
  int exit_code = -1;
  int signal = 0;
  StopReason stop = StopReason::none;
  double wall_ms = 0, cpu_ms = 0;
  int64_t max_rss_kb = 0;    // largest single process (ru_maxrss)
  int64_t tree_peak_kb = 0;  // largest sampled sum of the anonymous memory of all processes
  std::string stdout_data, stderr_data;
  bool stdout_truncated = false, stderr_truncated = false;
  bool has_artifact = false;
  std::string artifact;
  std::vector<std::string> fallbacks;
};

namespace detail {
nlohmann::json job_header(const ExecJob& job);      // blobs: stdin, then each file
ExecJob job_from_message(Message&& m);              // throws SandboxError
nlohmann::json result_header(const ExecResult& r);  // blobs: stdout, stderr, artifact
ExecResult result_from_message(Message&& m);
}  // namespace detail

}  // namespace rlwb::sandbox
