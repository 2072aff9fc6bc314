// pid 1 of one sandbox. Runs our code (not the program's), inside the
// sandbox's fresh namespaces, with capabilities over them only:
//   1. waits until the executor has written the uid/gid maps;
//   2. mounts a fresh /proc, sets the host name, makes itself undumpable
//      (so the program cannot read or write its memory through /proc/1),
//      drops the capability bounding set, reports ready;
//   3. on the job: mounts the work tmpfs, writes the files as the sandbox
//      user, spawns the program (vfork-style clone) which sets rlimits,
//      drops to the sandbox uid/gid, clears capabilities, sets
//      no_new_privs, installs seccomp and execs;
//   4. reaps every process, samples memory/CPU each tick, and when the main
//      process ends (or a limit or the executor says stop) kills all that
//      is left in the pid namespace, reaps it and reports.
#include <dirent.h>
#include <fcntl.h>
#include <grp.h>
#include <linux/capability.h>
#include <linux/seccomp.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <sys/fsuid.h>
#include <sys/mman.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/sendfile.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <ctime>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "sandbox/executor_internal.h"
#include "sandbox/fd_channel.h"
#include "sandbox/limits.h"

namespace rlwb::sandbox::detail {

void close_fds_except(std::initializer_list<int> keep) {
  std::vector<int> k(keep);
  std::sort(k.begin(), k.end());
  unsigned lo = 3;
  for (int fd : k) {
    if (fd < 3) continue;
    if (static_cast<unsigned>(fd) > lo) ::syscall(SYS_close_range, lo, static_cast<unsigned>(fd) - 1, 0);
    lo = static_cast<unsigned>(fd) + 1;
  }
  ::syscall(SYS_close_range, lo, ~0U, 0);
}

namespace {

// The pre-started interpreter: python3 starts while the sandbox is being
// prepared, waits for a byte on fd 3 (a pipe from init; its stdin, a memfd,
// is filled just before), then runs /tmp/main.py as __main__ the way
// `python3 -E -s /tmp/main.py` would (same sys.argv, sys.path[0],
// tracebacks and exit codes). It imports nothing beyond what python3
// imports anyway.
constexpr const char* kPythonLoader = R"PY(import os, sys
if os.read(3, 1) != b'G':
    os._exit(0)
os.close(3)
sys.argv = ['/tmp/main.py']
sys.path[0] = '/tmp'
_main = type(sys)('__main__')
_main.__file__ = '/tmp/main.py'
_main.__cached__ = None
sys.modules['__main__'] = _main
try:
    with open('/tmp/main.py', 'rb') as _src:
        _code = compile(_src.read(), '/tmp/main.py', 'exec')
    exec(_code, _main.__dict__)
except SystemExit:
    raise
except BaseException as _e:
    _tb = _e.__traceback__
    while _tb is not None and _tb.tb_frame.f_code.co_filename != '/tmp/main.py':
        _tb = _tb.tb_next
    sys.excepthook(type(_e), _e.with_traceback(_tb), _tb)
    sys.exit(1)
)PY";

const char* const kEnv[] = {"PATH=/usr/local/bin:/usr/bin:/bin",
                            "HOME=/tmp",
                            "TMPDIR=/tmp",
                            "LANG=C.UTF-8",
                            "USER=sandbox",
                            "LOGNAME=sandbox",
                            "PWD=/tmp"};

double mono_ms() {
  timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

double cpu_ms_of(const rusage& ru) {
  return (ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) * 1e3 + (ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) / 1e3;
}

[[noreturn]] void report_error(int ctl, const std::string& what) {
  nlohmann::json r = {
      {"sandbox_error", "sandbox init: " + what + (errno ? std::string(": ") + std::strerror(errno) : "")}};
  send_packet(ctl, r.dump());
  ::_exit(1);
}

// ---------------------------------------------------------------------------
// The stage: the program's process before it execs. Forked while the
// sandbox is prepared, it drops to the sandbox user, clears its
// capabilities, sets no_new_privs and installs seccomp right away, so that
// a job only pays for its rlimits and the execve. Everything it does after
// seccomp is within the sandbox policy.
// ---------------------------------------------------------------------------

[[noreturn]] void stage_fail(int sock, const char* step) {
  std::string m = std::string("E") + step + ": " + std::strerror(errno);
  send_packet(sock, m);
  ::_exit(126);
}

[[noreturn]] void stage_main(int sock, int out_w, int err_w, const SeccompProgram& seccomp) {
  ::prctl(PR_SET_NAME, "rlwb-stage");
  if (::dup2(out_w, 1) < 0 || ::dup2(err_w, 2) < 0) stage_fail(sock, "dup2");
  close_fds_except({sock});
  if (::syscall(SYS_setresgid, kInsideId, kInsideId, kInsideId) != 0) stage_fail(sock, "setresgid");
  if (::syscall(SYS_setresuid, kInsideId, kInsideId, kInsideId) != 0) stage_fail(sock, "setresuid");
  __user_cap_header_struct hdr{_LINUX_CAPABILITY_VERSION_3, 0};
  __user_cap_data_struct data[2] = {};
  if (::syscall(SYS_capset, &hdr, data) != 0) stage_fail(sock, "capset");
  if (::prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0) != 0 && errno != EINVAL)
    stage_fail(sock, "clear ambient capabilities");
  if (::prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0) stage_fail(sock, "no_new_privs");
  sock_fprog prog{static_cast<unsigned short>(seccomp.filter.size()),
                  const_cast<sock_filter*>(seccomp.filter.data())};
  if (::syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, 0, &prog) != 0) stage_fail(sock, "seccomp");
  if (!send_packet(sock, "S")) ::_exit(126);

  // ---- under the sandbox policy from here on ----
  std::string msg;
  std::vector<UniqueFd> fds;
  if (recv_packet(sock, msg, &fds, kNoDeadline) != IoStatus::ok || fds.empty() || fds.size() > 2) ::_exit(0);
  nlohmann::json job = nlohmann::json::parse(msg, nullptr, false);
  if (!job.is_object()) {
    errno = EINVAL;
    stage_fail(sock, "malformed exec message");
  }
  std::vector<std::string> argv_s = job["argv"].get<std::vector<std::string>>();
  std::vector<std::string> env_s = job["env"].get<std::vector<std::string>>();
  for (const auto& l : job["rlimits"]) {
    rlimit r{l[1].get<rlim_t>(), l[2].get<rlim_t>()};
    if (::setrlimit(static_cast<__rlimit_resource>(l[0].get<int>()), &r) != 0) stage_fail(sock, "setrlimit");
  }
  // Descriptor numbers may collide (the socket or stdin may be fd 3): move with care.
  const int in = fds[0].release(), go = fds.size() == 2 ? fds[1].release() : -1;
  fds.clear();
  if (::dup2(in, 0) < 0) stage_fail(sock, "dup2 stdin");
  if (in != 0) ::close(in);
  if (go >= 0) {  // a pre-started interpreter waits on fd 3 for its job
    if (sock == 3) {
      int moved = ::fcntl(sock, F_DUPFD_CLOEXEC, 4);
      if (moved < 0) stage_fail(sock, "move socket");
      sock = moved;
    }
    if (go != 3) {
      if (::dup2(go, 3) < 0) stage_fail(sock, "dup2 fd 3");
      ::close(go);
    } else if (::fcntl(3, F_SETFD, 0) != 0) {
      stage_fail(sock, "keep fd 3");
    }
  }
  if (::chdir("/tmp") != 0) stage_fail(sock, "chdir /tmp");
  std::vector<char*> argv, envp;
  for (auto& a : argv_s) argv.push_back(a.data());
  argv.push_back(nullptr);
  for (auto& e : env_s) envp.push_back(e.data());
  envp.push_back(nullptr);
  sigset_t none;
  sigemptyset(&none);
  ::sigprocmask(SIG_SETMASK, &none, nullptr);
  ::execve(argv[0], argv.data(), envp.data());
  send_packet(sock, "X" + std::to_string(errno));  // the socket closes on a successful exec
  ::_exit(127);
}

struct TreeSample {
  int64_t anon_kb = 0;
  double cpu_ms = 0;  // live processes (with their reaped children)
};

// Sums what the live processes of this pid namespace use (init excluded).
TreeSample sample_tree(int proc_fd, long page_kb, double ms_per_tick) {
  TreeSample s;
  int dfd = ::openat(proc_fd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (dfd < 0) return s;
  DIR* d = ::fdopendir(dfd);
  if (!d) {
    ::close(dfd);
    return s;
  }
  char buf[1024];
  while (dirent* e = ::readdir(d)) {
    if (e->d_name[0] < '1' || e->d_name[0] > '9' || std::strcmp(e->d_name, "1") == 0) continue;
    std::string base = e->d_name;
    int fd = ::openat(proc_fd, (base + "/statm").c_str(), O_RDONLY | O_CLOEXEC);
    if (fd >= 0) {
      ssize_t n = ::read(fd, buf, sizeof buf - 1);
      ::close(fd);
      if (n > 0) {
        buf[n] = '\0';
        long size = 0, resident = 0, shared = 0;
        if (std::sscanf(buf, "%ld %ld %ld", &size, &resident, &shared) == 3)
          s.anon_kb += std::max(0L, resident - shared) * page_kb;
      }
    }
    fd = ::openat(proc_fd, (base + "/stat").c_str(), O_RDONLY | O_CLOEXEC);
    if (fd >= 0) {
      ssize_t n = ::read(fd, buf, sizeof buf - 1);
      ::close(fd);
      if (n > 0) {
        buf[n] = '\0';
        const char* p = std::strrchr(buf, ')');  // the command name may contain anything
        unsigned long ut = 0, st = 0;
        long cut = 0, cst = 0;
        if (p && std::sscanf(p + 2, "%*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %lu %lu %ld %ld", &ut, &st,
                             &cut, &cst) == 4)
          s.cpu_ms += (ut + st + cut + cst) * ms_per_tick;
      }
    }
  }
  ::closedir(d);
  return s;
}

}  // namespace

int init_main(void* raw) {
  const InitArgs args = *static_cast<InitArgs*>(raw);
  const int ctl = args.ctl;
  ::prctl(PR_SET_PDEATHSIG, SIGKILL);
  close_fds_except({ctl, args.out_w, args.err_w});
  ::prctl(PR_SET_NAME, "rlwb-init");

  std::string msg;
  if (recv_packet(ctl, msg, nullptr, Clock::now() + std::chrono::seconds(10)) != IoStatus::ok ||
      (msg != "M" && msg != "MP"))
    ::_exit(1);
  const bool warm_python = msg == "MP";
  // uid/gid maps are in place: we hold every capability over our namespaces.
  if (::setgroups(0, nullptr) != 0) report_error(ctl, "setgroups");
  if (::setresgid(kInsideId, kInsideId, kInsideId) != 0) report_error(ctl, "setresgid");
  if (::mount("proc", "/proc", "proc", MS_NOSUID | MS_NODEV | MS_NOEXEC, nullptr) != 0)
    report_error(ctl, "mount /proc");
  if (::sethostname("sandbox", 7) != 0) report_error(ctl, "sethostname");
  if (::prctl(PR_SET_DUMPABLE, 0, 0, 0, 0) != 0) report_error(ctl, "PR_SET_DUMPABLE");
  for (int cap = 0; cap <= 63; ++cap)
    if (::prctl(PR_CAPBSET_DROP, cap, 0, 0, 0) != 0 && errno != EINVAL) report_error(ctl, "PR_CAPBSET_DROP");
  // The work tmpfs and the files in it belong to the sandbox user (a new
  // tmpfs's root takes the mounter's fsuid/fsgid). Its size is set per job.
  ::setfsuid(kInsideId);
  int mounted_mb = Limits{}.work_dir_mb;
  auto tmpfs_opts = [](int mb) { return "size=" + std::to_string(mb) + "m,nr_inodes=4096,mode=0755"; };
  if (::mount("rlwb-work", "/tmp", "tmpfs", MS_NOSUID | MS_NODEV, tmpfs_opts(mounted_mb).c_str()) != 0)
    report_error(ctl, "mount the work tmpfs");
  sigset_t chld;
  sigemptyset(&chld);
  sigaddset(&chld, SIGCHLD);
  int sfd = ::signalfd(-1, &chld, SFD_CLOEXEC | SFD_NONBLOCK);
  // SIGPIPE blocked, not ignored: an ignored signal would be inherited
  // through exec by the program; the stage unblocks everything.
  sigaddset(&chld, SIGPIPE);
  ::sigprocmask(SIG_BLOCK, &chld, nullptr);
  if (sfd < 0) report_error(ctl, "signalfd");
  int proc_fd = ::open("/proc", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (proc_fd < 0) report_error(ctl, "open /proc");

  int sp[2];
  if (::socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sp) != 0) report_error(ctl, "socketpair");
  const pid_t main_pid = ::fork();
  if (main_pid < 0) report_error(ctl, "fork the program's process");
  if (main_pid == 0) {
    ::close(sp[0]);
    stage_main(sp[1], args.out_w, args.err_w, *args.seccomp);
  }
  const int stage = sp[0];
  ::close(sp[1]);
  ::close(args.out_w);  // from now on only the program holds its output pipes
  ::close(args.err_w);
  if (recv_packet(stage, msg, nullptr, Clock::now() + std::chrono::seconds(10)) != IoStatus::ok ||
      msg != "S") {
    errno = EPROTO;
    report_error(ctl, "the program's process could not drop its privileges (" + msg + ")");
  }
  // A pre-started python3: its stdin (a memfd init fills at job time, read
  // through a read-only descriptor of its own) and its go pipe (fd 3).
  int py_stdin = -1, py_go = -1;
  if (warm_python) {
    nlohmann::json start = {
        {"argv", {"/usr/bin/python3", "-E", "-s", "-c", kPythonLoader}},
        {"env", kEnv},
        {"rlimits",
         nlohmann::json::array({{RLIMIT_CORE, 0, 0}, {RLIMIT_MEMLOCK, 0, 0}, {RLIMIT_MSGQUEUE, 0, 0}})}};
    py_stdin = ::memfd_create("stdin", MFD_CLOEXEC | MFD_ALLOW_SEALING);
    int go[2];
    if (py_stdin < 0 || ::pipe2(go, O_CLOEXEC) != 0) report_error(ctl, "prepare python3's stdin");
    py_go = go[1];
    int reader = ::open(("/proc/self/fd/" + std::to_string(py_stdin)).c_str(), O_RDONLY | O_CLOEXEC);
    if (reader < 0 || !send_packet(stage, start.dump(), {reader, go[0]})) report_error(ctl, "start python3");
    ::close(reader);
    ::close(go[0]);
  }
  if (!send_packet(ctl, "R")) ::_exit(1);

  // ---- wait for the job (the executor's death closes the socket) ----
  std::vector<UniqueFd> fds;
  if (recv_packet(ctl, msg, &fds, kNoDeadline) != IoStatus::ok || msg == "Q") ::_exit(0);
  nlohmann::json job = nlohmann::json::parse(msg, nullptr, false);
  if (job.is_discarded() || !job.contains("argv") || !job["argv"].is_array() || job["argv"].empty() ||
      fds.size() != job["files"].size() + 1) {
    errno = EINVAL;
    report_error(ctl, "malformed job");
  }
  Limits limits;
  try {
    limits = limits_from_json(job["limits"], Limits{});
  } catch (const std::exception&) {
    errno = EINVAL;
    report_error(ctl, "malformed limits");
  }
  if (limits.work_dir_mb != mounted_mb && ::mount(nullptr, "/tmp", nullptr, MS_REMOUNT | MS_NOSUID | MS_NODEV,
                                                  tmpfs_opts(limits.work_dir_mb).c_str()) != 0)
    report_error(ctl, "resize the work tmpfs");
  for (size_t i = 0; i < job["files"].size(); ++i) {
    const auto& f = job["files"][i];
    std::string name = f.value("name", "");
    if (name.empty() || name.find('/') != std::string::npos || name == "." || name == "..") {
      errno = EINVAL;
      report_error(ctl, "bad file name '" + name + "'");
    }
    int src = fds[i + 1].get();
    int dst = ::open(("/tmp/" + name).c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC,
                     f.value("executable", false) ? 0755 : 0644);
    if (dst < 0) report_error(ctl, "create /tmp/" + name);
    off_t size = ::lseek(src, 0, SEEK_END), off = 0;
    while (off < size) {
      ssize_t n = ::sendfile(dst, src, &off, static_cast<size_t>(size - off));
      if (n <= 0) report_error(ctl, "write /tmp/" + name);
    }
    ::close(dst);
    fds[i + 1].reset();
  }

  const rlim_t mb = 1024 * 1024;
  const rlim_t cpu_s = static_cast<rlim_t>((limits.cpu_ms + 999) / 1000);
  const rlim_t as = std::max<rlim_t>(2 * limits.memory_mb * mb, (limits.memory_mb + 256) * mb);
  const rlim_t fsize = limits.file_size_mb * mb;
  nlohmann::json rlimits = nlohmann::json::array({
      {RLIMIT_CPU, cpu_s, cpu_s + 1},
      {RLIMIT_AS, as, as},
      {RLIMIT_NPROC, limits.processes, limits.processes},
      {RLIMIT_FSIZE, fsize, fsize},
      {RLIMIT_NOFILE, limits.open_files, limits.open_files},
      {RLIMIT_CORE, 0, 0},
      {RLIMIT_MEMLOCK, 0, 0},
      {RLIMIT_MSGQUEUE, 0, 0},
  });
  double t0 = 0;
  if (warm_python) {
    if (!job.value("python_main", false)) {
      errno = EINVAL;
      report_error(ctl, "a sandbox with a started python3 got another kind of job");
    }
    for (const auto& l : rlimits) {
      rlimit r{l[1].get<rlim_t>(), l[2].get<rlim_t>()};
      if (::prlimit(main_pid, static_cast<__rlimit_resource>(l[0].get<int>()), &r, nullptr) != 0)
        report_error(ctl, "set the limits of the started python3");
    }
    off_t size = ::lseek(fds[0].get(), 0, SEEK_END), off = 0;
    while (off < size)
      if (::sendfile(py_stdin, fds[0].get(), &off, static_cast<size_t>(size - off)) <= 0)
        report_error(ctl, "fill python3's stdin");
    ::fcntl(py_stdin, F_ADD_SEALS, F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_WRITE | F_SEAL_SEAL);
    t0 = mono_ms();
    if (::write(py_go, "G", 1) != 1) report_error(ctl, "start the program");
    ::close(py_go);
  } else {
    nlohmann::json exec = {{"argv", job["argv"]}, {"env", kEnv}, {"rlimits", rlimits}};
    t0 = mono_ms();
    if (!send_packet(stage, exec.dump(), {fds[0].get()})) report_error(ctl, "start the program");
  }
  fds.clear();
  nlohmann::json result = {{"started", true}};

  // ---- supervise ----
  const long page_kb = ::sysconf(_SC_PAGESIZE) / 1024;
  const double ms_per_tick = 1000.0 / static_cast<double>(::sysconf(_SC_CLK_TCK));
  const int64_t mem_limit_kb = int64_t(limits.memory_mb) * 1024;
  double reaped_cpu = 0, sampled_cpu = 0, end_ms = 0;
  int64_t max_rss = 0, tree_peak = 0;
  int main_status = 0;
  bool main_done = false;
  std::string stop = "none";
  auto reap = [&](int flags) {
    for (;;) {
      int st;
      rusage ru;
      pid_t p = ::wait4(-1, &st, flags | __WALL, &ru);
      if (p <= 0) return p;
      reaped_cpu += cpu_ms_of(ru);
      max_rss = std::max<int64_t>(max_rss, ru.ru_maxrss);
      if (p == main_pid) {
        main_done = true;
        main_status = st;
        end_ms = mono_ms();
      }
    }
  };
  double next_tick = t0 + kWatchdogTickMs;
  while (!main_done) {
    int timeout = std::max(0, static_cast<int>(next_tick - mono_ms()) + 1);
    pollfd p[2] = {{sfd, POLLIN, 0}, {ctl, POLLIN, 0}};
    int n = ::poll(p, 2, timeout);
    if (n < 0 && errno != EINTR) break;
    if (p[0].revents) {
      signalfd_siginfo si;
      while (::read(sfd, &si, sizeof si) == sizeof si) {
      }
      reap(WNOHANG);
      if (main_done) break;
    }
    if (p[1].revents) {
      std::vector<UniqueFd> ignored;
      IoStatus s = recv_packet(ctl, msg, &ignored, Clock::now());
      if (s == IoStatus::closed || s == IoStatus::error) {
        ::kill(-1, SIGKILL);
        ::_exit(1);
      }
      if (s == IoStatus::ok && !msg.empty() && msg[0] == 'K') {
        stop = msg.substr(1);
        break;
      }
    }
    if (mono_ms() >= next_tick) {
      TreeSample s = sample_tree(proc_fd, page_kb, ms_per_tick);
      tree_peak = std::max(tree_peak, s.anon_kb);
      if (s.anon_kb > mem_limit_kb) {
        stop = "memory";
        break;
      }
      sampled_cpu = std::max(sampled_cpu, reaped_cpu + s.cpu_ms);
      if (reaped_cpu + s.cpu_ms > limits.cpu_ms) {
        stop = "cpu";
        break;
      }
      next_tick = mono_ms() + kWatchdogTickMs;
    }
  }
  if (!main_done) end_ms = mono_ms();
  // The main process is gone (or must go): nothing of the program outlives it.
  ::kill(-1, SIGKILL);
  while (reap(0) > 0 || errno == EINTR) {
  }

  // Did the stage fail before exec? (after a successful exec its socket is closed)
  if (recv_packet(stage, msg, nullptr, Clock::now()) == IoStatus::ok && !msg.empty()) {
    if (msg[0] == 'X') {
      result["exec_errno"] = std::atoi(msg.c_str() + 1);  // the program's file: not the sandbox's fault
      result["started"] = false;
    } else if (msg[0] == 'E') {
      errno = 0;
      report_error(ctl, "the program's process failed at " + msg.substr(1));
    }
  }
  result["stop"] = stop;
  result["wall_ms"] = end_ms - t0;
  // rusage of everything reaped; a watchdog sample (clock ticks) may be a little higher
  result["cpu_ms"] = std::max(reaped_cpu, sampled_cpu);
  result["max_rss_kb"] = max_rss;
  result["tree_peak_kb"] = tree_peak;
  if (main_done) {
    if (WIFEXITED(main_status)) result["exit_code"] = WEXITSTATUS(main_status);
    if (WIFSIGNALED(main_status)) result["signal"] = WTERMSIG(main_status);
  }
  std::vector<int> out_fds;
  std::string collect = job.value("collect", "");
  if (main_done && stop == "none" && WIFEXITED(main_status) && WEXITSTATUS(main_status) == 0 &&
      !collect.empty() && collect.find('/') == std::string::npos) {
    int src = ::open(("/tmp/" + collect).c_str(), O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
    struct stat st;
    if (src >= 0 && ::fstat(src, &st) == 0 && S_ISREG(st.st_mode) &&
        st.st_size <= int64_t(limits.file_size_mb) * 1024 * 1024) {
      int art = ::memfd_create("artifact", MFD_CLOEXEC);
      off_t off = 0;
      bool ok = art >= 0;
      while (ok && off < st.st_size)
        ok = ::sendfile(art, src, &off, static_cast<size_t>(st.st_size - off)) > 0;
      if (ok) {
        out_fds.push_back(art);
        result["artifact"] = true;
      }
    }
    if (src >= 0) ::close(src);
  }
  send_packet(ctl, result.dump(), out_fds);
  ::_exit(0);
}

}  // namespace rlwb::sandbox::detail
