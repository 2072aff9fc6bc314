#include "core/launch/remote_host.h"

#include <csignal>
#include <cstring>

#include "core/launch/run_command.h"

namespace rlwb::core {
namespace {

bool says(const std::string& output, const char* what) { return output.find(what) != std::string::npos; }

std::string trimmed(std::string text) {
  while (!text.empty() && (text.back() == '\n' || text.back() == '\r' || text.back() == ' ')) text.pop_back();
  return text;
}

// ssh exits 255 when it could not get a session; its message says why.
[[noreturn]] void throw_ssh_failure(const RemoteHost& remote, const CommandResult& result) {
  const std::string& out = result.output;
  const std::string host = "the SSH host '" + remote.host + "'";
  const std::string said = " (ssh said: " + trimmed(out) + ")";
  if (result.timed_out)
    throw RemoteHostError(host + " did not answer in time" + said +
                          ": check that it is up and reachable, or raise the connect timeout");
  if (says(out, "Could not resolve hostname") || says(out, "Name or service not known"))
    throw RemoteHostError(host + " does not resolve" + said +
                          ": check the name, or add it as a Host entry of your ssh config");
  if (says(out, "Permission denied") || says(out, "Too many authentication failures"))
    throw RemoteHostError(host + " refused the key" + said +
                          ": add your public key to its ~/.ssh/authorized_keys, or name the right key with "
                          "IdentityFile in your ssh config");
  if (says(out, "Host key verification failed"))
    throw RemoteHostError(host + " has an unknown or changed host key" + said +
                          ": connect once with plain ssh to check and accept it");
  if (says(out, "Connection refused") || says(out, "timed out") || says(out, "No route to host") ||
      says(out, "Network is unreachable"))
    throw RemoteHostError("cannot connect to " + host + said +
                          ": check that sshd runs there and the port is right");
  throw RemoteHostError("ssh to " + host + " failed with exit code " + std::to_string(result.exit_code) +
                        said);
}

CommandResult run_there(const RemoteHost& remote, const std::string& command,
                        std::chrono::milliseconds timeout, const std::string& input = {}) {
  CommandResult result = run_command(ssh_argv(remote, command), timeout, input);
  if (result.exit_code == 255 || result.timed_out || result.exit_code < 0) throw_ssh_failure(remote, result);
  return result;
}

std::chrono::milliseconds command_bound(const RemoteHost& remote) {
  return std::chrono::seconds(remote.connect_timeout_s + 20);
}

}  // namespace

std::string shell_quote(const std::string& text) {
  std::string quoted = "'";
  for (char c : text) {
    if (c == '\'')
      quoted += "'\\''";
    else
      quoted += c;
  }
  return quoted + "'";
}

std::string remote_path(const std::string& path) {
  if (path == "~") return path;
  if (path.rfind("~/", 0) == 0) return "~/" + shell_quote(path.substr(2));
  return shell_quote(path);
}

std::vector<std::string> ssh_argv(const RemoteHost& remote, const std::string& remote_command) {
  std::vector<std::string> argv = {"ssh"};
  if (!remote.ssh_config.empty()) argv.insert(argv.end(), {"-F", remote.ssh_config});
  argv.insert(
      argv.end(),
      {"-o", "BatchMode=yes", "-o", "ConnectTimeout=" + std::to_string(remote.connect_timeout_s), "-o",
       "ServerAliveInterval=2", "-o", "ServerAliveCountMax=3", remote.host, "--", remote_command});
  return argv;
}

std::string in_remote_dir(const RemoteHost& remote) {
  return "mkdir -p " + remote_path(remote.dir) + " && cd " + remote_path(remote.dir) + " && ";
}

void check_remote_host(const RemoteHost& remote, const std::string& version) {
  if (remote.host.empty() || remote.host[0] == '-')
    throw RemoteHostError("'" + remote.host +
                          "' is not an SSH host: name a Host alias of your ssh config or user@host");
  const CommandResult result =
      run_there(remote, remote_path(remote.rlwb) + " --version", command_bound(remote));
  const std::string out = trimmed(result.output);
  if (result.exit_code == 127 ||
      (result.exit_code != 0 && (says(out, "not found") || says(out, "No such file"))))
    throw RemoteHostError("the SSH host '" + remote.host + "' has no rlwb command '" + remote.rlwb +
                          "' (it said: " + out + "): install rlwb " + version +
                          " there, or pass its path with --remote-rlwb PATH");
  if (result.exit_code != 0)
    throw RemoteHostError("'" + remote.rlwb + " --version' on '" + remote.host + "' failed with exit code " +
                          std::to_string(result.exit_code) + ": " + out);
  const std::string ours = "rlwb " + version;
  const auto line_end = out.rfind('\n');
  const std::string theirs = line_end == std::string::npos ? out : out.substr(line_end + 1);
  if (theirs != ours)
    throw RemoteHostError("the SSH host '" + remote.host + "' runs " + theirs + " but this is " + ours +
                          ": a run's stream and tracking DB need the same version on both sides; install " +
                          ours + " there (or point --remote-rlwb at it)");
}

void upload_file(const RemoteHost& remote, const std::string& name, const std::string& text) {
  const CommandResult result =
      run_there(remote, in_remote_dir(remote) + "cat > " + shell_quote(name), command_bound(remote), text);
  if (!result.ok())
    throw RemoteHostError("cannot write " + remote.dir + "/" + name + " on '" + remote.host +
                          "': " + trimmed(result.output));
}

int64_t start_detached(const RemoteHost& remote, const std::vector<std::string>& run_args,
                       const std::string& log) {
  // The inner shell writes its pid and then becomes rlwb (exec), so the pid
  // is the controller's whatever setsid and nohup do; every stream is
  // redirected, so ssh returns as soon as the pid file is written.
  const std::string pid_file = log + ".pid";
  std::string inner = "echo $$ > " + shell_quote(pid_file) + "; exec " + remote_path(remote.rlwb) + " run";
  for (const auto& arg : run_args) inner += " " + shell_quote(arg);
  const std::string command = in_remote_dir(remote) + "rm -f " + shell_quote(pid_file) +
                              "; setsid nohup sh -c " + shell_quote(inner) + " > " + shell_quote(log) +
                              " 2>&1 < /dev/null & i=0; while [ ! -s " + shell_quote(pid_file) +
                              " ] && [ $i -lt 100 ]; do sleep 0.1; i=$((i+1)); done; cat " +
                              shell_quote(pid_file);
  const CommandResult result = run_there(remote, command, command_bound(remote));
  const std::string out = trimmed(result.output);
  try {
    const auto line = out.rfind('\n');
    const int64_t pid = std::stoll(out.substr(line == std::string::npos ? 0 : line + 1));
    if (result.ok() && pid > 0) return pid;
  } catch (const std::exception&) {
  }
  throw RemoteHostError("starting the run on '" + remote.host + "' failed: " + out);
}

bool signal_remote(const RemoteHost& remote, int64_t pid, int signal, std::string* why) {
  try {
    const CommandResult result = run_there(
        remote, "kill -" + std::to_string(signal) + " " + std::to_string(pid), command_bound(remote));
    if (result.ok()) return true;
    if (why) *why = trimmed(result.output);
  } catch (const RemoteHostError& e) {
    if (why) *why = e.what();
  }
  return false;
}

}  // namespace rlwb::core
