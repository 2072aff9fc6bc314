// A long-running command read line by line with a bound on every wait: the
// remote follow (`ssh HOST rlwb runs follow ...`) is one. Its stdout is read
// in lines; its stderr is kept (the last 8 KiB) to explain an exit. The
// process is killed when the object goes. No LibTorch.
#pragma once

#include <sys/types.h>

#include <chrono>
#include <optional>
#include <string>
#include <vector>

namespace rlwb::core {

class LineProcess {
 public:
  // Starts `argv` (looked up in PATH) with stdin from /dev/null; throws
  // std::runtime_error when it cannot start.
  explicit LineProcess(const std::vector<std::string>& argv);
  ~LineProcess();
  LineProcess(const LineProcess&) = delete;
  LineProcess& operator=(const LineProcess&) = delete;

  // The next line of stdout without its newline; nothing when `timeout`
  // passed first or the output ended (then ended() is true).
  std::optional<std::string> next_line(std::chrono::milliseconds timeout);
  bool ended() const { return out_fd_ < 0; }
  // Kills it (SIGKILL) if still running and reaps it; its exit code, or -1
  // when a signal ended it.
  int finish();
  const std::string& stderr_text() const { return err_; }

 private:
  void drain_stderr();

  pid_t pid_ = -1;
  int out_fd_ = -1, err_fd_ = -1;
  std::string buffer_, err_;
  int exit_code_ = -1;
};

}  // namespace rlwb::core
