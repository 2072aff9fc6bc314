// Turns what the executor saw (ExecResult) into a Verdict, by fixed rules:
//   sandbox failure                      -> sandbox_error
//   stdout over its cap                  -> output_limit
//   wall clock / CPU limit (SIGXCPU too) -> timeout
//   memory watchdog, or peak resident memory over the limit, or an
//   allocation the limit refused (MemoryError, std::bad_alloc)   -> memory_limit
//   SIGSYS (seccomp)                     -> policy_violation
//   SIGXFSZ / EFBIG (file size limit)    -> output_limit
//   other signal or non-zero exit        -> runtime_error
//   exit 0                               -> ok
// A compile step maps every failure of the program to compile_error (a
// seccomp kill of the compiler is the sandbox's fault: sandbox_error).
// Used by program_runner.cpp.
#pragma once

#include "sandbox/exec_job.h"
#include "sandbox/verdict.h"

namespace rlwb::sandbox {

enum class Phase { run, compile };

Verdict classify(ExecResult&& result, const Limits& limits, Phase phase = Phase::run);

}  // namespace rlwb::sandbox
