// Runs and judges programs on top of any executor: compile (C, C++) once
// in a sandbox of its own with the compile limits, run each test in a fresh
// sandbox with the run limits, compare outputs, score. The executor is a
// function so that the same logic serves the in-process pool
// (local_sandbox.h) and the service's workers (service.h).
#pragma once

#include <functional>
#include <string_view>

#include "sandbox/exec_job.h"
#include "sandbox/requests.h"

namespace rlwb::sandbox {

using ExecFn = std::function<ExecResult(const ExecJob&)>;

// Throws SandboxError for bad input (empty program, no tests, bad limits);
// everything the program does ends in the returned verdict/result.
Verdict run_with(const ExecFn& exec, const RunRequest& request);
JudgeResult judge_with(const ExecFn& exec, const JudgeRequest& request);

// Output comparison; on mismatch `why` says where (first differing line).
bool outputs_match(std::string_view actual, std::string_view expected, Comparison how,
                   std::string* why = nullptr);

// Checks a request before any work (language-independent rules).
void validate(const RunRequest& request);
void validate(const JudgeRequest& request);

}  // namespace rlwb::sandbox
