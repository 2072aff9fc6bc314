#include "core/launch/line_process.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <stdexcept>

namespace rlwb::core {

LineProcess::LineProcess(const std::vector<std::string>& argv) {
  if (argv.empty()) throw std::runtime_error("LineProcess: no command");
  std::vector<char*> args;
  for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  int out[2], err[2];
  if (pipe2(out, O_CLOEXEC) != 0)
    throw std::runtime_error(std::string("cannot make a pipe: ") + strerror(errno));
  if (pipe2(err, O_CLOEXEC) != 0) {
    close(out[0]);
    close(out[1]);
    throw std::runtime_error(std::string("cannot make a pipe: ") + strerror(errno));
  }
  pid_ = fork();
  if (pid_ < 0) {
    for (int fd : {out[0], out[1], err[0], err[1]}) close(fd);
    throw std::runtime_error(std::string("cannot fork: ") + strerror(errno));
  }
  if (pid_ == 0) {
    dup2(out[1], STDOUT_FILENO);
    dup2(err[1], STDERR_FILENO);
    int devnull = open("/dev/null", O_RDONLY);
    if (devnull >= 0) dup2(devnull, STDIN_FILENO);
    execvp(args[0], args.data());
    dprintf(STDERR_FILENO, "cannot run %s: %s\n", args[0], strerror(errno));
    _exit(127);
  }
  close(out[1]);
  close(err[1]);
  out_fd_ = out[0];
  err_fd_ = err[0];
  fcntl(err_fd_, F_SETFL, O_NONBLOCK);
}

LineProcess::~LineProcess() { finish(); }

void LineProcess::drain_stderr() {
  if (err_fd_ < 0) return;
  char buf[4096];
  while (true) {
    ssize_t n = read(err_fd_, buf, sizeof buf);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      if (n == 0) {
        close(err_fd_);
        err_fd_ = -1;
      }
      return;
    }
    err_.append(buf, static_cast<size_t>(n));
    if (err_.size() > 8192) err_.erase(0, err_.size() - 8192);
  }
}

std::optional<std::string> LineProcess::next_line(std::chrono::milliseconds timeout) {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  while (true) {
    const auto newline = buffer_.find('\n');
    if (newline != std::string::npos) {
      std::string line = buffer_.substr(0, newline);
      buffer_.erase(0, newline + 1);
      return line;
    }
    if (out_fd_ < 0) return std::nullopt;
    const auto left =
        std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
    if (left.count() <= 0) return std::nullopt;
    pollfd p[2] = {{out_fd_, POLLIN, 0}, {err_fd_, POLLIN, 0}};
    const int ready = poll(p, err_fd_ >= 0 ? 2 : 1, static_cast<int>(left.count()));
    if (ready < 0 && errno != EINTR) return std::nullopt;
    if (ready <= 0) continue;
    if (err_fd_ >= 0 && p[1].revents) drain_stderr();
    if (!p[0].revents) continue;
    char buf[65536];
    const ssize_t n = read(out_fd_, buf, sizeof buf);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {  // the output ended: a last line without a newline is dropped (cut off)
      close(out_fd_);
      out_fd_ = -1;
      return std::nullopt;
    }
    buffer_.append(buf, static_cast<size_t>(n));
  }
}

int LineProcess::finish() {
  if (pid_ > 0) {
    int status = 0;
    pid_t done = waitpid(pid_, &status, WNOHANG);
    // Output that ended means it is exiting: give it a moment to say how.
    for (int i = 0; done == 0 && out_fd_ < 0 && i < 100; ++i) {
      usleep(20000);
      done = waitpid(pid_, &status, WNOHANG);
    }
    if (done == 0) {
      kill(pid_, SIGKILL);
      while ((done = waitpid(pid_, &status, 0)) < 0 && errno == EINTR) {
      }
    }
    exit_code_ = (done == pid_ && WIFEXITED(status)) ? WEXITSTATUS(status) : -1;
    pid_ = -1;
  }
  drain_stderr();
  for (int* fd : {&out_fd_, &err_fd_})
    if (*fd >= 0) {
      close(*fd);
      *fd = -1;
    }
  return exit_code_;
}

}  // namespace rlwb::core
