// The seccomp allowlist every sandboxed process runs under, compiled once
// per executor into a classic BPF program that the last step before exec
// installs (after no_new_privs). Default action: kill the whole process
// (the verdict says policy_violation). A few calls that runtimes probe get
// an errno instead of death: socket (EPERM), memfd_create (EPERM) and
// clone3 (ENOSYS, so glibc falls back to clone, whose flags the filter can
// inspect: clone with any CLONE_NEW* flag is killed). Non-native
// architectures (int 0x80, x32) are killed. Used by the executor only.
#pragma once

#include <linux/filter.h>

#include <string>
#include <vector>

namespace rlwb::sandbox {

struct SeccompProgram {
  std::vector<sock_filter> filter;  // install with seccomp(SECCOMP_SET_MODE_FILTER)
};

// Throws SandboxError when libseccomp cannot build the filter.
SeccompProgram build_seccomp_program();

// The syscall names the policy allows / answers with an errno (for docs and tests).
const std::vector<std::string>& allowed_syscalls();

}  // namespace rlwb::sandbox
