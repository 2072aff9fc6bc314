// A remote host for the tests of `rlwb run --remote`: a network namespace
// (tests/core/controller/netns_hosts.h) running Debian's OpenSSH server on
// its own address, port 2222, with a host key and a client key made for the
// test. ssh_config() names it "rlwb-remote" (the key is taken) and
// "rlwb-wrong-key" (a key it does not know). set_link_up(false) cuts it off
// as a pulled cable would. Needs root, iproute2 and openssh-server;
// available() says why not. sshd is stopped and the namespace removed when
// the object goes.
#pragma once

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <string>
#include <thread>

#include "tests/core/controller/netns_hosts.h"

namespace rlwb::testing {

class SshHost {
 public:
  explicit SshHost(const std::filesystem::path& dir) : dir_(dir) {
    if (!hosts_.available()) {
      why_not_ = "cannot make a network-namespace host: " + hosts_.why_not();
      return;
    }
    if (!std::filesystem::exists("/usr/sbin/sshd")) {
      why_not_ = "no /usr/sbin/sshd (Debian's openssh-server; scripts/setup.sh installs it)";
      return;
    }
    std::filesystem::create_directories(dir_);
    std::filesystem::create_directories("/run/sshd");  // sshd's privilege separation folder
    for (const char* key : {"host_key", "client_key", "other_key"})
      if (!sh("ssh-keygen -q -t ed25519 -N '' -f " + path(key))) return;
    std::filesystem::copy_file(path("client_key.pub"), path("authorized_keys"));
    std::ofstream(path("sshd_config"))
        << "Port 2222\nListenAddress " << hosts_.address(0) << "\nHostKey " << path("host_key")
        << "\nAuthorizedKeysFile " << path("authorized_keys")
        << "\nPidFile none\nStrictModes no\nUsePAM no\nPasswordAuthentication no\n"
           "KbdInteractiveAuthentication no\nPermitRootLogin prohibit-password\n";
    std::ofstream(path("ssh_config"))
        << entry("rlwb-remote", "client_key") << entry("rlwb-wrong-key", "other_key");
    sshd_ = fork();
    if (sshd_ == 0) {
      if (!freopen(path("sshd.log").c_str(), "w", stderr)) _exit(126);
      execl("/usr/sbin/ip", "ip", "netns", "exec", hosts_.name(0).c_str(), "/usr/sbin/sshd", "-D", "-e", "-f",
            path("sshd_config").c_str(), static_cast<char*>(nullptr));
      _exit(127);
    }
    // Up when a login works (bounded: 10 s).
    for (int i = 0; i < 100; ++i) {
      if (sh("ssh -F " + path("ssh_config") + " -o ConnectTimeout=2 rlwb-remote true")) {
        ok_ = true;
        return;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
    why_not_ = "sshd did not take a login within 10 s; its log: " + read(path("sshd.log"));
  }
  ~SshHost() {
    if (sshd_ > 0) {
      kill(sshd_, SIGTERM);
      waitpid(sshd_, nullptr, 0);
    }
  }
  SshHost(const SshHost&) = delete;
  SshHost& operator=(const SshHost&) = delete;

  bool available() const { return ok_; }
  const std::string& why_not() const { return why_not_; }
  std::string ssh_config() const { return path("ssh_config"); }
  bool set_link_up(bool up) { return hosts_.set_link_up(0, up); }
  // Runs `command` on the host (as ssh would: in its namespace).
  bool run_there(const std::string& command) { return sh("ip netns exec " + hosts_.name(0) + " " + command); }

 private:
  std::string path(const std::string& name) const { return (dir_ / name).string(); }
  std::string entry(const std::string& alias, const std::string& key) const {
    return "Host " + alias + "\n  HostName " + hosts_.address(0) +
           "\n  Port 2222\n  User root\n  IdentityFile " + path(key) +
           "\n  IdentitiesOnly yes\n  StrictHostKeyChecking no\n  UserKnownHostsFile /dev/null\n"
           "  LogLevel ERROR\n";
  }
  static std::string read(const std::string& file) {
    std::ifstream in(file);
    return std::string((std::istreambuf_iterator<char>(in)), {});
  }
  bool sh(const std::string& command) {
    const int code = std::system((command + " > /dev/null 2>&1").c_str());
    if (code != 0 && why_not_.empty()) why_not_ = "'" + command + "' failed";
    return code == 0;
  }

  std::filesystem::path dir_;
  NetnsHosts hosts_{1};
  pid_t sshd_ = -1;
  bool ok_ = false;
  std::string why_not_;
};

}  // namespace rlwb::testing
