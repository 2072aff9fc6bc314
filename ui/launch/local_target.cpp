// The "local" launch target: the controller as a child of the GUI through
// core's LocalLauncher (own process group, killed if the GUI dies, output
// in a log file), its workers found in /proc as the controller's children.
#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <stdexcept>
#include <tuple>

#include "core/launch/local_launcher.h"
#include "ui/launch/launch_target.h"

namespace rlwb::ui {
namespace {

struct ProcStat {
  pid_t ppid = 0;
  char state = '?';
  double cpu_seconds = 0;
};

bool read_stat(pid_t pid, ProcStat& out) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/stat");
  std::string text;
  if (!std::getline(in, text)) return false;
  auto close = text.rfind(')');  // the command name may hold spaces
  if (close == std::string::npos) return false;
  std::istringstream rest(text.substr(close + 2));
  std::string field;
  std::vector<std::string> f;
  while (rest >> field) f.push_back(field);
  if (f.size() < 13) return false;
  out.state = f[0].empty() ? '?' : f[0][0];
  out.ppid = static_cast<pid_t>(std::stol(f[1]));
  out.cpu_seconds = (std::stod(f[11]) + std::stod(f[12])) / static_cast<double>(sysconf(_SC_CLK_TCK));
  return true;
}

std::vector<std::string> cmdline(pid_t pid) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/cmdline", std::ios::binary);
  std::vector<std::string> args;
  for (std::string arg; std::getline(in, arg, '\0');) args.push_back(arg);
  return args;
}

class LocalTarget : public LaunchTarget {
 public:
  explicit LocalTarget(std::string log_dir) : launcher_(log_dir) {}

  std::string name() const override { return "local"; }

  void start(const LaunchRequest& request) override {
    if (active()) throw std::runtime_error("a run is already going; stop it first");
    ++count_;
    process_ = "controller-" + std::to_string(count_);
    core::ProcessSpec spec;
    spec.name = process_;
    spec.argv = launch_argv(request);
    pid_ = launcher_.start(spec);
    state_ = "running";
    exit_code_ = -1;
    stop_sent_ = false;
  }

  void poll() override {
    for (const core::ProcessExit& e : launcher_.poll_exits()) {
      if (e.pid != pid_) continue;
      state_ = e.describe();
      exit_code_ = e.signal ? -1 : e.exit_code;
      pid_ = 0;
    }
    if (pid_ && stop_sent_ && std::chrono::steady_clock::now() - stop_at_ > std::chrono::seconds(20))
      state_ = "stopping (taking long; Kill ends it at once)";
  }

  bool active() const override { return pid_ != 0; }
  std::string state() const override { return state_; }
  int exit_code() const override { return exit_code_; }
  pid_t controller_pid() const override { return pid_; }

  std::vector<WorkerProcess> workers(const std::string& log_dir) const override {
    std::vector<WorkerProcess> out;
    if (!pid_) return out;
    std::error_code ec;
    for (const auto& entry : std::filesystem::directory_iterator("/proc", ec)) {
      const std::string name = entry.path().filename().string();
      if (name.empty() || !isdigit(static_cast<unsigned char>(name[0]))) continue;
      pid_t pid = static_cast<pid_t>(std::stol(name));
      ProcStat stat;
      if (!read_stat(pid, stat) || stat.ppid != pid_) continue;
      WorkerProcess w;
      w.pid = pid;
      w.state = stat.state;
      w.cpu_seconds = stat.cpu_seconds;
      auto args = cmdline(pid);
      for (size_t i = 0; i + 1 < args.size(); ++i) {
        if (args[i] == "--group") w.group = args[i + 1];
        if (args[i] == "--rank") w.rank = std::atoi(args[i + 1].c_str());
      }
      if (w.group.empty()) continue;  // not a worker (a sandbox, a shell)
      if (!log_dir.empty()) {
        auto log = std::filesystem::path(log_dir) / (w.group + "-" + std::to_string(w.rank) + ".log");
        auto when = std::filesystem::last_write_time(log, ec);
        if (!ec)
          w.log_age_seconds =
              std::chrono::duration<double>(std::filesystem::file_time_type::clock::now() - when).count();
      }
      out.push_back(w);
    }
    std::sort(out.begin(), out.end(), [](const WorkerProcess& a, const WorkerProcess& b) {
      return std::tie(a.group, a.rank) < std::tie(b.group, b.rank);
    });
    return out;
  }

  std::string log_tail(size_t max_bytes) const override {
    return process_.empty() ? std::string() : launcher_.log_tail(process_, max_bytes);
  }

  void stop() override {
    if (!pid_) return;
    ::kill(pid_, SIGTERM);  // the controller stops its workers and records 'interrupted'
    stop_sent_ = true;
    stop_at_ = std::chrono::steady_clock::now();
    state_ = "stopping";
  }

  void kill() override {
    if (pid_) ::kill(pid_, SIGKILL);  // its workers die with it (PDEATHSIG)
  }

 private:
  core::LocalLauncher launcher_;
  std::string process_;
  pid_t pid_ = 0;
  int count_ = 0;
  int exit_code_ = -1;
  std::string state_ = "idle";
  bool stop_sent_ = false;
  std::chrono::steady_clock::time_point stop_at_;
};

}  // namespace

std::vector<std::string> launch_target_names() { return {"local", "remote"}; }

std::unique_ptr<LaunchTarget> make_launch_target(const std::string& name, const std::string& log_dir) {
  if (name == "local") return std::make_unique<LocalTarget>(log_dir);
  if (name == "remote") return make_remote_target(std::make_unique<LocalTarget>(log_dir));
  throw std::invalid_argument("unknown launch target '" + name + "' (available: local, remote)");
}

std::vector<std::string> launch_argv(const LaunchRequest& r) {
  std::vector<std::string> argv = {r.cli, "run", r.experiment_file};
  argv.insert(argv.end(), r.overrides.begin(), r.overrides.end());
  argv.insert(argv.end(), {"--db", r.db});
  if (!r.name.empty()) argv.insert(argv.end(), {"--name", r.name});
  if (r.from_run > 0) argv.insert(argv.end(), {"--from-run", std::to_string(r.from_run)});
  if (!r.remote.host.empty()) {
    argv.insert(argv.end(),
                {"--remote", r.remote.host, "--remote-dir", r.remote.dir, "--remote-rlwb", r.remote.rlwb});
    if (!r.remote.ssh_config.empty()) argv.insert(argv.end(), {"--ssh-config", r.remote.ssh_config});
  }
  return argv;
}

std::vector<std::string> split_overrides(const std::string& text) {
  std::vector<std::string> out;
  std::istringstream in(text);
  for (std::string word; in >> word;) out.push_back(word);
  return out;
}

}  // namespace rlwb::ui
