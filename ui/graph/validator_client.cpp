#include "ui/graph/validator_client.h"

#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>

extern char** environ;

namespace rlwb::ui {
namespace {

constexpr auto kSettle = std::chrono::milliseconds(250);

std::string temp_path() {
  auto dir = std::filesystem::temp_directory_path() / ("rlwb-gui-" + std::to_string(getpid()));
  std::filesystem::create_directories(dir);
  return (dir / "validate.yaml").string();
}

}  // namespace

int run_and_capture(const std::vector<std::string>& argv, std::string& output,
                    std::chrono::milliseconds timeout, const std::atomic<bool>* cancel) {
  int fds[2];
  if (pipe(fds) != 0) return -1;
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_adddup2(&actions, fds[1], 1);
  posix_spawn_file_actions_adddup2(&actions, fds[1], 2);
  posix_spawn_file_actions_addclose(&actions, fds[0]);
  std::vector<char*> args;
  for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  pid_t pid = 0;
  int rc = posix_spawn(&pid, args[0], &actions, nullptr, args.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  close(fds[1]);
  if (rc != 0) {
    close(fds[0]);
    return -1;
  }
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  std::string killed;
  char buffer[4096];
  for (;;) {
    pollfd p = {fds[0], POLLIN, 0};
    int ready = ::poll(&p, 1, 100);
    if (ready > 0) {
      ssize_t n = read(fds[0], buffer, sizeof buffer);
      if (n <= 0) break;  // EOF: the program closed its output (it is exiting)
      output.append(buffer, static_cast<size_t>(n));
      continue;
    }
    if (cancel && *cancel)
      killed = "stopped: the editor closed";
    else if (std::chrono::steady_clock::now() > deadline)
      killed = "no answer within " + std::to_string(timeout.count() / 1000) + " s";
    if (!killed.empty()) {
      ::kill(pid, SIGKILL);
      break;
    }
  }
  close(fds[0]);
  int status = 0;
  waitpid(pid, &status, 0);  // it has exited or was killed: no wait
  if (!killed.empty()) {
    output = killed + (output.empty() ? "" : "; output so far: " + output);
    return -1;
  }
  return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

std::vector<core::GraphIssue> parse_validate_output(const std::string& output,
                                                    const std::string& file) {
  std::vector<core::GraphIssue> issues;
  std::istringstream lines(output);
  std::string line;
  while (std::getline(lines, line)) {
    size_t start = line.find_first_not_of(' ');
    if (start == std::string::npos) continue;
    std::string text = line.substr(start);
    if (text.rfind(file, 0) != 0) continue;  // "rlwb: the graph file has ..." and the like
    text = text.substr(file.size());
    core::GraphIssue issue;
    issue.file = file;
    if (text.size() > 1 && text[0] == ':' && isdigit(static_cast<unsigned char>(text[1]))) {
      size_t end = 1;
      while (end < text.size() && isdigit(static_cast<unsigned char>(text[end]))) ++end;
      issue.line = std::stoi(text.substr(1, end - 1));
      text = text.substr(end);
    }
    if (text.rfind(": ", 0) == 0) text = text.substr(2);
    if (text.rfind("warning: ", 0) == 0) {
      issue.severity = core::Severity::warning;
      text = text.substr(9);
    }
    if (text.rfind("node '", 0) == 0) {
      size_t close = text.find("': ", 6);
      if (close != std::string::npos) {
        issue.node = text.substr(6, close - 6);
        text = text.substr(close + 3);
      }
    }
    size_t hint = text.rfind(" (hint: ");
    if (hint != std::string::npos && text.back() == ')') {
      issue.hint = text.substr(hint + 8, text.size() - hint - 9);
      text = text.substr(0, hint);
    }
    issue.message = text;
    issues.push_back(std::move(issue));
  }
  return issues;
}

ValidatorClient::~ValidatorClient() {
  closing_ = true;
  if (worker_.joinable()) worker_.join();
  std::error_code ec;
  std::filesystem::remove_all(std::filesystem::path(temp_path()).parent_path(), ec);
}

bool ValidatorClient::settled() const {
  std::lock_guard<std::mutex> lock(mu_);
  return state_ == State::unavailable || (!busy_ && wanted_ != 0 && wanted_ == checked_);
}

void ValidatorClient::update(uint64_t version, const std::string& yaml_text) {
  auto now = std::chrono::steady_clock::now();
  std::lock_guard<std::mutex> lock(mu_);
  if (version != wanted_) {
    wanted_ = version;
    changed_at_ = now;
  }
  if (state_ == State::unavailable) return;
  if (busy_ || wanted_ == checked_ || wanted_ == running_ || now - changed_at_ < kSettle) return;
  if (worker_.joinable()) worker_.join();
  running_ = wanted_;
  state_ = State::checking;
  busy_ = true;
  worker_ = std::thread(&ValidatorClient::run_check, this, wanted_, yaml_text);
}

void ValidatorClient::run_check(uint64_t version, std::string text) {
  std::string file, output;
  int rc = -1;
  try {
    file = temp_path();
    std::ofstream(file, std::ios::binary) << text;
    rc = cli_.empty() ? -1
                      : run_and_capture({cli_, "validate", file}, output, std::chrono::seconds(60),
                                        &closing_);
  } catch (const std::exception& e) {
    output = e.what();
  }
  std::lock_guard<std::mutex> lock(mu_);
  busy_ = false;
  running_ = 0;
  if (rc < 0 || rc > 1) {
    state_ = State::unavailable;
    message_ = cli_.empty() ? "no rlwb CLI found (pass --cli PATH)"
                            : "could not run '" + cli_ + " validate' (exit " + std::to_string(rc) +
                                  "): " + output.substr(0, 300);
    return;
  }
  issues_ = rc == 0 ? std::vector<core::GraphIssue>{} : parse_validate_output(output, file);
  // An exit of 1 without a parsable issue is an error of its own: show it.
  if (rc == 1 && issues_.empty())
    issues_.push_back(
        {"", 0, "", output.empty() ? "rlwb validate failed" : output, "", core::Severity::error});
  for (auto& issue : issues_) {
    issue.file.clear();  // the temp file's lines mean nothing to the user
    issue.line = 0;
  }
  checked_ = version;
  state_ = State::done;
}

ValidatorClient::State ValidatorClient::state() const {
  std::lock_guard<std::mutex> lock(mu_);
  return state_;
}

uint64_t ValidatorClient::checked_version() const {
  std::lock_guard<std::mutex> lock(mu_);
  return checked_;
}

std::vector<core::GraphIssue> ValidatorClient::issues() const {
  std::lock_guard<std::mutex> lock(mu_);
  return issues_;
}

std::string ValidatorClient::message() const {
  std::lock_guard<std::mutex> lock(mu_);
  return message_;
}

}  // namespace rlwb::ui
