#include "sandbox/sandbox_binary.h"

#include <unistd.h>

#include <filesystem>

#include "sandbox/sandbox_error.h"

namespace rlwb::sandbox {

std::string find_sandbox_binary() {
  if (const char* env = std::getenv("RLWB_SANDBOX")) return env;
  std::error_code ec;
  auto self = std::filesystem::read_symlink("/proc/self/exe", ec);
  if (ec)
    throw SandboxError(
        "cannot find rlwb-sandbox: /proc/self/exe is "
        "unreadable; set RLWB_SANDBOX");
  auto dir = self.parent_path();
  for (auto candidate : {dir / "rlwb-sandbox", dir / ".." / "sandbox" / "rlwb-sandbox"})
    if (::access(candidate.c_str(), X_OK) == 0) return std::filesystem::canonical(candidate).string();
  throw SandboxError("cannot find rlwb-sandbox next to " + self.string() +
                     " or in ../sandbox; set RLWB_SANDBOX=/path/to/rlwb-sandbox");
}

std::string find_executor_binary() {
  const std::string sandbox = find_sandbox_binary();
  auto executor = std::filesystem::path(sandbox).parent_path() / "rlwb-sandbox-executor";
  return ::access(executor.c_str(), X_OK) == 0 ? executor.string() : sandbox;
}

}  // namespace rlwb::sandbox
