// A remote host reached over SSH (OpenSSH's `ssh`, so the user's ssh config,
// keys and agent apply): the checks before a remote run starts, copying a
// file there, starting `rlwb run` there detached from the connection, and
// signalling it. Every call has a bound (ConnectTimeout, a deadline on the
// command) and turns ssh's failures into what is wrong and what to do.
// The follow loop that mirrors the run is remote_follow.h. No LibTorch.
#pragma once

#include <chrono>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

namespace rlwb::core {

class RemoteHostError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

struct RemoteHost {
  std::string host;                 // an ssh destination: a Host alias of the ssh config, or [user@]name
  std::string ssh_config;           // ssh -F FILE; "": the user's (~/.ssh/config)
  std::string rlwb = "rlwb";        // the rlwb command there
  std::string dir = "rlwb-remote";  // working folder there; relative: to the login folder
  int connect_timeout_s = 10;
};

// Single-quoted for a POSIX shell.
std::string shell_quote(const std::string& text);
// A path on the remote host for its shell: quoted, but a leading "~/"
// stays outside the quotes so that it means the home folder there.
std::string remote_path(const std::string& path);

// ssh's argv for running `remote_command` (a shell command line) on the host:
// batch mode (no prompt ever waits), the connect timeout, and keep-alives
// that end the connection within about 6 s when the link is cut.
std::vector<std::string> ssh_argv(const RemoteHost& remote, const std::string& remote_command);

// "cd DIR && " for commands that run in the working folder.
std::string in_remote_dir(const RemoteHost& remote);

// The host answers, takes the key, and runs `rlwb` of this same version
// (`version` is this build's). Throws RemoteHostError naming the cause and fix.
void check_remote_host(const RemoteHost& remote, const std::string& version);

// Writes `text` to DIR/name there (DIR made if missing).
void upload_file(const RemoteHost& remote, const std::string& name, const std::string& text);

// Starts `rlwb run ARGS` in DIR there under setsid and nohup, its output in
// DIR/LOG (its pid in DIR/LOG.pid), so it survives the connection; returns
// its pid there.
int64_t start_detached(const RemoteHost& remote, const std::vector<std::string>& run_args,
                       const std::string& log);

// Sends `signal` to process `pid` there; false (with `why`) if that failed.
bool signal_remote(const RemoteHost& remote, int64_t pid, int signal, std::string* why = nullptr);

}  // namespace rlwb::core
