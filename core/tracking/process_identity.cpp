// Process identity from /proc (see process_identity.h).
#include "core/tracking/process_identity.h"

#include <signal.h>
#include <unistd.h>

#include <cerrno>
#include <fstream>
#include <sstream>
#include <string>

namespace rlwb::core {
namespace {

std::string boot_id() {
  std::ifstream in("/proc/sys/kernel/random/boot_id");
  std::string id;
  std::getline(in, id);
  return id;
}

struct ProcStat {
  bool found = false;
  char state = '?';
  std::string start_ticks;
};

// /proc/PID/stat: "pid (comm) state ppid ... starttime(22nd field) ...";
// comm may hold spaces and parentheses, so parse after the last ')'.
ProcStat read_proc_stat(int64_t pid) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/stat");
  std::string line;
  if (!std::getline(in, line)) return {};
  const auto close = line.rfind(')');
  if (close == std::string::npos) return {};
  std::istringstream fields(line.substr(close + 1));
  ProcStat stat;
  stat.found = true;
  fields >> stat.state;
  std::string field;
  for (int index = 4; index <= 22 && fields >> field; ++index) {  // state was field 3
    if (index == 22) stat.start_ticks = field;
  }
  return stat;
}

std::string start_token(const std::string& boot, const ProcStat& stat) {
  if (boot.empty() || stat.start_ticks.empty()) return "";
  return boot + ":" + stat.start_ticks;
}

}  // namespace

ProcessIdentity current_process_identity() {
  ProcessIdentity identity;
  char host[256] = {};
  if (gethostname(host, sizeof host - 1) == 0) identity.host = host;
  identity.pid = getpid();
  identity.start = start_token(boot_id(), read_proc_stat(identity.pid));
  return identity;
}

bool process_is_running(int64_t pid, const std::string& start) {
  if (pid <= 0) return false;
  const ProcStat stat = read_proc_stat(pid);
  if (stat.found) {
    if (stat.state == 'Z' || stat.state == 'X') return false;
    if (start.empty()) return true;
    return start_token(boot_id(), stat) == start;
  }
  // No /proc entry: either the process is gone or /proc is not mounted.
  if (kill(static_cast<pid_t>(pid), 0) == 0) return start.empty();
  return errno == EPERM && start.empty();
}

}  // namespace rlwb::core
