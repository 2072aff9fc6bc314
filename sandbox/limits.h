// Resource limits of one execution (run or compile step), as plain values
// with documented defaults. The executor turns them into rlimits, a tmpfs
// size, a wall-clock deadline and output caps (see docs/sandbox.md).
// Used by requests (run_request.h), the executor and the service protocol.
#pragma once

#include <cstdint>
#include <nlohmann/json_fwd.hpp>

namespace rlwb::sandbox {

struct Limits {
  int wall_ms = 5000;               // wall clock, from start to the kill of the whole process tree
  int cpu_ms = 5000;                // CPU time of all the program's processes together
  int memory_mb = 256;              // resident memory of all the program's processes together
  int processes = 64;               // processes + threads (RLIMIT_NPROC of the sandbox user)
  int file_size_mb = 16;            // largest file the program may write (RLIMIT_FSIZE)
  int open_files = 64;              // RLIMIT_NOFILE
  int work_dir_mb = 64;             // size of the private tmpfs work directory
  int64_t stdout_bytes = 1 << 20;   // more stdout than this is an output_limit verdict
  int64_t stderr_bytes = 64 << 10;  // stderr beyond this is dropped (stderr_truncated)
};

// Defaults for running a program, and for compiling one (gcc needs more
// memory and time than a typical test run).
Limits default_run_limits();
Limits default_compile_limits();

// Throws SandboxError naming the field when a value is out of its range
// (e.g. "limits.wall_ms = 0: must be between 1 and 600000").
void validate_limits(const Limits& limits, const char* what = "limits");

// JSON object with the fields above; from_json starts from `base` and
// overrides the keys present; unknown keys and wrong types throw SandboxError.
nlohmann::json limits_to_json(const Limits& limits);
Limits limits_from_json(const nlohmann::json& j, const Limits& base, const char* what = "limits");

}  // namespace rlwb::sandbox
