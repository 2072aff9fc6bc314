#include "sandbox/service_launch.h"

#include "sandbox/client.h"
#include "sandbox/sandbox_error.h"

namespace rlwb::sandbox {

std::vector<std::string> service_argv(const std::string& binary, const std::string& endpoint, int executors) {
  std::vector<std::string> argv = {binary, "serve", "--endpoint", endpoint};
  if (executors > 0) {
    argv.push_back("--executors");
    argv.push_back(std::to_string(executors));
  }
  return argv;
}

void wait_for_service(const std::string& endpoint, std::chrono::milliseconds timeout) {
  SandboxClient client(endpoint);
  const auto until = std::chrono::steady_clock::now() + timeout;
  std::string last;
  while (std::chrono::steady_clock::now() < until) {
    try {
      client.ping(std::chrono::milliseconds(250));
      return;
    } catch (const SandboxError& e) {
      last = e.what();
    }
  }
  throw SandboxError("the sandbox service at " + endpoint + " did not answer within " +
                     std::to_string(timeout.count()) + " ms" + (last.empty() ? "" : ": " + last));
}

}  // namespace rlwb::sandbox
