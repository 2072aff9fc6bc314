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
#include "sandbox/executor_internal.h"
#include "sandbox/fd_channel.h"
#include "sandbox/limits.h"

#include <dirent.h>
#include <fcntl.h>
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
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>
#include <grp.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <ctime>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

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

double mono_ms() {
  timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

double cpu_ms_of(const rusage& ru) {
  return (ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) * 1e3 +
         (ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) / 1e3;
}

[[noreturn]] void report_error(int ctl, const std::string& what) {
  nlohmann::json r = {{"sandbox_error", "sandbox init: " + what + ": " + std::strerror(errno)}};
  send_packet(ctl, r.dump());
  ::_exit(1);
}

// What the vfork-style child needs, prepared before the clone (the child
// only makes system calls; it shares our memory until it execs).
struct SpawnArgs {
  char* const* argv = nullptr;
  char* const* envp = nullptr;
  int stdin_fd = -1, out_fd = -1, err_fd = -1;
  int resources[8] = {};
  rlimit limits[8] = {};
  int nlimits = 0;
  const sock_fprog* prog = nullptr;
  int failed_errno = 0;  // written by the child when a step fails
  int failed_step = 0;   // 1..: which step (0: none; 9: execve)
};

int spawn_child(void* p) {
  auto* a = static_cast<SpawnArgs*>(p);
  auto fail = [a](int step) {
    a->failed_errno = errno;
    a->failed_step = step;
    ::_exit(127);
  };
  sigset_t none;
  sigemptyset(&none);
  if (::syscall(SYS_rt_sigprocmask, SIG_SETMASK, &none, nullptr, sizeof(uint64_t)) != 0) fail(1);
  if (::dup2(a->stdin_fd, 0) < 0 || ::dup2(a->out_fd, 1) < 0 || ::dup2(a->err_fd, 2) < 0) fail(2);
  ::syscall(SYS_close_range, 3U, ~0U, 0);
  for (int i = 0; i < a->nlimits; ++i)
    if (::setrlimit(static_cast<__rlimit_resource>(a->resources[i]), &a->limits[i]) != 0) fail(3);
  if (::syscall(SYS_setresgid, kInsideId, kInsideId, kInsideId) != 0) fail(4);
  if (::syscall(SYS_setresuid, kInsideId, kInsideId, kInsideId) != 0) fail(5);
  __user_cap_header_struct hdr{_LINUX_CAPABILITY_VERSION_3, 0};
  __user_cap_data_struct data[2] = {};
  if (::syscall(SYS_capset, &hdr, data) != 0) fail(6);
  if (::prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0) != 0 && errno != EINVAL) fail(6);
  if (::prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0) fail(7);
  if (::syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, 0, a->prog) != 0) fail(8);
  ::execve(a->argv[0], a->argv, a->envp);
  fail(9);
  return 127;
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
        if (p && std::sscanf(p + 2, "%*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %lu %lu %ld %ld",
                             &ut, &st, &cut, &cst) == 4)
          s.cpu_ms += (ut + st + cut + cst) * ms_per_tick;
      }
    }
  }
  ::closedir(d);
  return s;
}

void set_limit(SpawnArgs& a, int resource, rlim_t soft, rlim_t hard) {
  a.resources[a.nlimits] = resource;
  a.limits[a.nlimits] = {soft, hard};
  ++a.nlimits;
}

}  // namespace

int init_main(void* raw) {
  const InitArgs args = *static_cast<InitArgs*>(raw);
  const int ctl = args.ctl;
  ::prctl(PR_SET_PDEATHSIG, SIGKILL);
  close_fds_except({ctl, args.out_w, args.err_w});
  ::prctl(PR_SET_NAME, "rlwb-init");

  std::string msg;
  if (recv_packet(ctl, msg, nullptr, Clock::now() + std::chrono::seconds(10)) != IoStatus::ok || msg != "M")
    ::_exit(1);
  // uid/gid maps are in place: we hold every capability over our namespaces.
  if (::setgroups(0, nullptr) != 0) report_error(ctl, "setgroups");
  if (::setresgid(kInsideId, kInsideId, kInsideId) != 0) report_error(ctl, "setresgid");
  if (::mount("proc", "/proc", "proc", MS_NOSUID | MS_NODEV | MS_NOEXEC, nullptr) != 0)
    report_error(ctl, "mount /proc");
  if (::sethostname("sandbox", 7) != 0) report_error(ctl, "sethostname");
  if (::prctl(PR_SET_DUMPABLE, 0, 0, 0, 0) != 0) report_error(ctl, "PR_SET_DUMPABLE");
  for (int cap = 0; cap <= 63; ++cap)
    if (::prctl(PR_CAPBSET_DROP, cap, 0, 0, 0) != 0 && errno != EINVAL) report_error(ctl, "PR_CAPBSET_DROP");
  sigset_t chld;
  sigemptyset(&chld);
  sigaddset(&chld, SIGCHLD);
  ::sigprocmask(SIG_BLOCK, &chld, nullptr);
  int sfd = ::signalfd(-1, &chld, SFD_CLOEXEC | SFD_NONBLOCK);
  if (sfd < 0) report_error(ctl, "signalfd");
  int proc_fd = ::open("/proc", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (proc_fd < 0) report_error(ctl, "open /proc");
  if (!send_packet(ctl, "R")) ::_exit(1);

  // ---- wait for the job (the executor's death closes the socket) ----
  std::vector<UniqueFd> fds;
  if (recv_packet(ctl, msg, &fds, kNoDeadline) != IoStatus::ok || msg == "Q") ::_exit(0);
  nlohmann::json job = nlohmann::json::parse(msg, nullptr, false);
  if (job.is_discarded() || !job.contains("argv") || fds.size() != job["files"].size() + 1) {
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

  // The work tmpfs and the files in it belong to the sandbox user (a new
  // tmpfs's root takes the mounter's fsuid/fsgid).
  ::setfsuid(kInsideId);
  std::string tmpfs_opts = "size=" + std::to_string(limits.work_dir_mb) + "m,nr_inodes=4096,mode=0755";
  if (::mount("rlwb-work", "/tmp", "tmpfs", MS_NOSUID | MS_NODEV, tmpfs_opts.c_str()) != 0)
    report_error(ctl, "mount the work tmpfs");
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
  if (::chdir("/tmp") != 0) report_error(ctl, "chdir /tmp");

  std::vector<std::string> argv_s = job["argv"].get<std::vector<std::string>>();
  if (argv_s.empty()) {
    errno = EINVAL;
    report_error(ctl, "empty argv");
  }
  std::vector<char*> argv;
  for (auto& s : argv_s) argv.push_back(s.data());
  argv.push_back(nullptr);
  std::string env_s[] = {"PATH=/usr/local/bin:/usr/bin:/bin", "HOME=/tmp", "TMPDIR=/tmp",
                         "LANG=C.UTF-8", "USER=sandbox", "LOGNAME=sandbox", "PWD=/tmp"};
  std::vector<char*> envp;
  for (auto& s : env_s) envp.push_back(s.data());
  envp.push_back(nullptr);

  sock_fprog prog{static_cast<unsigned short>(args.seccomp->filter.size()),
                  const_cast<sock_filter*>(args.seccomp->filter.data())};
  SpawnArgs sa;
  sa.argv = argv.data();
  sa.envp = envp.data();
  sa.stdin_fd = fds[0].get();
  sa.out_fd = args.out_w;
  sa.err_fd = args.err_w;
  sa.prog = &prog;
  const rlim_t mb = 1024 * 1024;
  const rlim_t cpu_s = static_cast<rlim_t>((limits.cpu_ms + 999) / 1000);
  const rlim_t as = std::max<rlim_t>(2 * limits.memory_mb * mb, (limits.memory_mb + 256) * mb);
  set_limit(sa, RLIMIT_CPU, cpu_s, cpu_s + 1);
  set_limit(sa, RLIMIT_AS, as, as);
  set_limit(sa, RLIMIT_NPROC, limits.processes, limits.processes);
  set_limit(sa, RLIMIT_FSIZE, limits.file_size_mb * mb, limits.file_size_mb * mb);
  set_limit(sa, RLIMIT_NOFILE, limits.open_files, limits.open_files);
  set_limit(sa, RLIMIT_CORE, 0, 0);
  set_limit(sa, RLIMIT_MEMLOCK, 0, 0);
  set_limit(sa, RLIMIT_MSGQUEUE, 0, 0);

  alignas(16) static char stack[64 * 1024];
  const double t0 = mono_ms();
  pid_t main_pid = ::clone(spawn_child, stack + sizeof stack, CLONE_VM | CLONE_VFORK | SIGCHLD, &sa);
  const int spawn_errno = errno;
  ::close(args.out_w);
  ::close(args.err_w);
  fds.clear();

  nlohmann::json result = {{"started", false}};
  if (main_pid < 0) {
    errno = spawn_errno;
    report_error(ctl, "clone the program");
  }
  if (sa.failed_step == 9) {
    result["exec_errno"] = sa.failed_errno;  // the program's own file is bad: not a sandbox error
  } else if (sa.failed_step != 0) {
    static const char* steps[] = {"", "sigprocmask", "dup2", "setrlimit", "setresgid", "setresuid",
                                  "capset", "no_new_privs", "seccomp"};
    errno = sa.failed_errno;
    ::waitpid(main_pid, nullptr, __WALL);
    report_error(ctl, std::string("program setup step ") + steps[sa.failed_step]);
  } else {
    result["started"] = true;
  }

  // ---- supervise ----
  const long page_kb = ::sysconf(_SC_PAGESIZE) / 1024;
  const double ms_per_tick = 1000.0 / static_cast<double>(::sysconf(_SC_CLK_TCK));
  const int64_t mem_limit_kb = int64_t(limits.memory_mb) * 1024;
  double reaped_cpu = 0, end_ms = 0;
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

  result["stop"] = stop;
  result["wall_ms"] = end_ms - t0;
  result["cpu_ms"] = reaped_cpu;
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
      while (ok && off < st.st_size) ok = ::sendfile(art, src, &off, static_cast<size_t>(st.st_size - off)) > 0;
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
