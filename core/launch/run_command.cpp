#include "core/launch/run_command.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace rlwb::core {

CommandResult run_command(const std::vector<std::string>& argv, std::chrono::milliseconds timeout,
                          const std::string& input) {
  CommandResult result;
  if (argv.empty()) return result;
  std::vector<char*> args;
  for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  int fds[2];
  if (pipe2(fds, O_CLOEXEC) != 0) {
    result.output = std::string("cannot make a pipe: ") + strerror(errno);
    return result;
  }
  int in_fds[2] = {-1, -1};
  if (!input.empty() && pipe2(in_fds, O_CLOEXEC) != 0) {
    close(fds[0]);
    close(fds[1]);
    result.output = std::string("cannot make a pipe: ") + strerror(errno);
    return result;
  }
  pid_t pid = fork();
  if (pid < 0) {
    close(fds[0]);
    close(fds[1]);
    if (in_fds[0] >= 0) close(in_fds[0]), close(in_fds[1]);
    result.output = std::string("cannot fork: ") + strerror(errno);
    return result;
  }
  if (pid == 0) {
    dup2(fds[1], STDOUT_FILENO);
    dup2(fds[1], STDERR_FILENO);
    int source = in_fds[0] >= 0 ? in_fds[0] : open("/dev/null", O_RDONLY);
    if (source >= 0) dup2(source, STDIN_FILENO);
    execvp(args[0], args.data());
    dprintf(STDERR_FILENO, "cannot run %s: %s\n", args[0], strerror(errno));
    _exit(127);
  }
  close(fds[1]);
  // The input is written as the command takes it, between reads of its
  // output, so neither side blocks on a full pipe.
  int writer = -1;
  size_t written = 0;
  struct sigaction ignore_pipe {
  }, old_pipe{};
  ignore_pipe.sa_handler = SIG_IGN;
  if (in_fds[0] >= 0) {
    // A command that exits without reading all its input must not take
    // this process down with SIGPIPE; the write fails with EPIPE instead.
    sigaction(SIGPIPE, &ignore_pipe, &old_pipe);
    close(in_fds[0]);
    writer = in_fds[1];
    fcntl(writer, F_SETFL, O_NONBLOCK);
  }
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  char buf[4096];
  while (true) {
    auto left =
        std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
    if (left.count() <= 0) {
      result.timed_out = true;
      kill(pid, SIGKILL);
      break;
    }
    pollfd p[2] = {{fds[0], POLLIN, 0}, {writer, POLLOUT, 0}};
    int ready = poll(p, writer >= 0 ? 2 : 1, static_cast<int>(left.count()));
    if (ready < 0 && errno == EINTR) continue;
    if (ready <= 0) continue;
    if (writer >= 0 && (p[1].revents & (POLLOUT | POLLERR | POLLHUP))) {
      ssize_t sent = write(writer, input.data() + written, input.size() - written);
      if (sent > 0) written += static_cast<size_t>(sent);
      if (sent < 0 && errno != EAGAIN && errno != EINTR) written = input.size();  // it closed its stdin
      if (written == input.size()) {
        close(writer);
        writer = -1;
      }
    }
    if (!(p[0].revents & (POLLIN | POLLHUP | POLLERR))) continue;
    ssize_t n = read(fds[0], buf, sizeof buf);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;  // the command closed its output: it is ending
    result.output.append(buf, static_cast<size_t>(n));
  }
  close(fds[0]);
  if (writer >= 0) close(writer);
  if (in_fds[0] >= 0) sigaction(SIGPIPE, &old_pipe, nullptr);
  int status = 0;
  while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  if (!result.timed_out && WIFEXITED(status)) result.exit_code = WEXITSTATUS(status);
  if (result.timed_out)
    result.output += "\n(" + argv[0] + " did not finish within " + std::to_string(timeout.count()) + " ms)";
  return result;
}

}  // namespace rlwb::core
