#include "sandbox/executor.h"

#include <fcntl.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <sstream>

#include "sandbox/executor_internal.h"
#include "sandbox/fd_channel.h"
#include "sandbox/sandbox_binary.h"
#include "sandbox/sandbox_error.h"
#include "sandbox/sandbox_root.h"

#ifndef CGROUP2_SUPER_MAGIC
#define CGROUP2_SUPER_MAGIC 0x63677270
#endif

namespace rlwb::sandbox {

using detail::Clock;
using detail::IoStatus;
using detail::Message;
using detail::UniqueFd;

namespace {

constexpr uint64_t kMaxMessageBytes = uint64_t(1) << 31;
constexpr int kSandboxFlags =
    CLONE_NEWUSER | CLONE_NEWPID | CLONE_NEWNET | CLONE_NEWNS | CLONE_NEWIPC | CLONE_NEWUTS | CLONE_NEWCGROUP;
const char* const kNamespaceNames[] = {"user", "pid", "net", "mount", "ipc", "uts", "cgroup"};

std::string errno_text(const std::string& what) { return what + ": " + std::strerror(errno); }

// cgroup v2 with the memory and pids controllers, mounted at /sys/fs/cgroup?
std::string cgroup_fallback() {
  struct statfs fs;
  bool v2 = ::statfs("/sys/fs/cgroup", &fs) == 0 && fs.f_type == CGROUP2_SUPER_MAGIC;
  std::string controllers;
  if (v2) {
    std::ifstream in("/sys/fs/cgroup/cgroup.controllers");
    std::getline(in, controllers);
  }
  std::string why =
      !v2 ? "cgroup v2 is not mounted at /sys/fs/cgroup" : "cgroup v2 limits are not used by this build";
  if (v2 &&
      (controllers.find("memory") == std::string::npos || controllers.find("pids") == std::string::npos))
    why = "cgroup v2 has no memory/pids controllers here";
  return "no cgroup (" + why +
         "): memory is limited by RLIMIT_AS per process and a 10 ms watchdog on the resident "
         "memory of all the program's processes; processes by RLIMIT_NPROC of the sandbox user; "
         "CPU by RLIMIT_CPU and the same watchdog";
}

// ---------------------------------------------------------------------------
// [SECTION] The executor process (child side)
// ---------------------------------------------------------------------------

struct Spare {
  pid_t pid = -1;
  UniqueFd ctl, out_r, err_r, pidfd;
  bool python = false;  // a python3 interpreter is already started in it
  bool ready() const { return pid > 0; }
};

class ExecutorProcess {
 public:
  ExecutorProcess(int owner, int slot, const ExecutorConfig& cfg)
      : owner_(owner), host_id_(cfg.host_id_base + static_cast<uint32_t>(slot)), cfg_(cfg) {}

  [[noreturn]] void main() {
    std::string error;
    try {
      detail::enter_sandbox_root(detail::kInsideId);
      seccomp_ = build_seccomp_program();
    } catch (const std::exception& e) {
      error = e.what();
    }
    if (error.empty() && !prepare(spare_, error, false)) error = "cannot create a sandbox: " + error;
    nlohmann::json hello = {{"ok", error.empty()}, {"error", error}};
    if (error.empty()) {
      hello["namespaces"] = kNamespaceNames;
      hello["fallbacks"] = {fallback_};
    }
    if (detail::send_message(owner_, hello, {}, Clock::now() + std::chrono::seconds(10)) != IoStatus::ok ||
        !error.empty())
      ::_exit(1);

    for (;;) {
      Message m;
      IoStatus s = detail::recv_message(owner_, m, detail::kNoDeadline, kMaxMessageBytes);
      if (s != IoStatus::ok) shutdown();
      ExecResult r;
      try {
        ExecJob job = detail::job_from_message(std::move(m));
        std::string err;
        if (spare_.ready() && spare_.python && !job.python_main) discard(spare_);  // wrong kind
        const bool warm = spare_.ready() && spare_.python;
        if (!spare_.ready() && !prepare(spare_, err, false))
          r.sandbox_error = "cannot create a sandbox: " + err;
        else
          r = run(spare_, job);
        if (warm && !r.sandbox_error.empty()) {  // the pre-started interpreter failed: once more, cold
          discard(spare_);
          if (prepare(spare_, err, false)) r = run(spare_, job);
        }
        // Prepare for more of the same: python jobs get a pre-started interpreter.
        python_next_ = job.python_main;
      } catch (const std::exception& e) {
        r.sandbox_error = e.what();
      }
      r.fallbacks = {fallback_};
      std::vector<std::string_view> blobs = {r.stdout_data, r.stderr_data};
      if (r.has_artifact) blobs.push_back(r.artifact);
      if (detail::send_message(owner_, detail::result_header(r), blobs,
                               Clock::now() + std::chrono::seconds(30)) != IoStatus::ok)
        shutdown();
      discard(spare_);
      std::string err;
      prepare(spare_, err, python_next_);  // the next job will retry and report if this failed
      // Tell the owner a prepared sandbox is waiting (it prefers executors that are ready).
      if (detail::send_message(owner_, {{"ready", true}}, {}, Clock::now() + std::chrono::seconds(30)) !=
          IoStatus::ok)
        shutdown();
    }
  }

 private:
  [[noreturn]] void shutdown() {
    discard(spare_);
    ::_exit(0);
  }

  // Kills (if needed) and reaps the sandbox's init; bounded.
  void discard(Spare& s) {
    if (!s.ready()) return;
    s.ctl.reset();  // an idle init exits on its own when the socket closes
    pollfd p{s.pidfd.get(), POLLIN, 0};
    if (!s.pidfd || ::poll(&p, 1, 200) <= 0) ::kill(s.pid, SIGKILL);
    ::waitpid(s.pid, nullptr, __WALL);
    s = Spare{};
  }

  bool prepare(Spare& s, std::string& error, bool python) {
    int sp[2], out[2], err[2];
    if (::socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sp) != 0) {
      error = errno_text("socketpair");
      return false;
    }
    UniqueFd ctl(sp[0]), ctl_child(sp[1]);
    if (::pipe2(out, O_CLOEXEC) != 0) {
      error = errno_text("pipe");
      return false;
    }
    UniqueFd out_r(out[0]), out_w(out[1]);
    if (::pipe2(err, O_CLOEXEC) != 0) {
      error = errno_text("pipe");
      return false;
    }
    UniqueFd err_r(err[0]), err_w(err[1]);
    detail::InitArgs args{ctl_child.get(), out_w.get(), err_w.get(), &seccomp_};
    pid_t pid = ::clone(detail::init_main, init_stack_ + sizeof init_stack_, kSandboxFlags | SIGCHLD, &args);
    if (pid < 0) {
      error = errno_text("clone with new user, pid, net, mount, ipc, uts and cgroup namespaces");
      error += probe_namespaces();
      return false;
    }
    ctl_child.reset();
    out_w.reset();
    err_w.reset();
    s.pid = pid;
    s.ctl = std::move(ctl);
    s.out_r = std::move(out_r);
    s.err_r = std::move(err_r);
    s.pidfd.reset(static_cast<int>(::syscall(SYS_pidfd_open, pid, 0)));
    std::string map = std::to_string(detail::kInsideId) + " " + std::to_string(host_id_) + " 1\n";
    std::string proc = "/proc/" + std::to_string(pid);
    for (const char* file : {"/uid_map", "/gid_map"}) {
      int fd = ::open((proc + file).c_str(), O_WRONLY | O_CLOEXEC);
      bool ok = fd >= 0 && ::write(fd, map.data(), map.size()) == static_cast<ssize_t>(map.size());
      if (!ok) error = errno_text(std::string("write ") + proc + file);
      if (fd >= 0) ::close(fd);
      if (!ok) {
        discard(s);
        return false;
      }
    }
    std::string reply;
    s.python = python;
    if (!detail::send_packet(s.ctl.get(), python ? "MP" : "M") ||
        detail::recv_packet(s.ctl.get(), reply, nullptr, Clock::now() + std::chrono::seconds(10)) !=
            IoStatus::ok ||
        reply != "R") {
      auto j = nlohmann::json::parse(reply, nullptr, false);
      error = (!j.is_discarded() && j.is_object()) ? j.value("sandbox_error", reply)
                                                   : "sandbox init did not become ready";
      discard(s);
      return false;
    }
    return true;
  }

  // Which namespace kind does the kernel refuse? (for the error message)
  static std::string probe_namespaces() {
    const int flags[] = {CLONE_NEWUSER, CLONE_NEWPID, CLONE_NEWNET,   CLONE_NEWNS,
                         CLONE_NEWIPC,  CLONE_NEWUTS, CLONE_NEWCGROUP};
    std::string refused;
    for (size_t i = 0; i < std::size(flags); ++i) {
      pid_t p = ::syscall(SYS_clone, flags[i] | SIGCHLD, nullptr, nullptr, nullptr, nullptr);
      if (p == 0) ::_exit(0);
      if (p < 0)
        refused += std::string(refused.empty() ? "" : ", ") + kNamespaceNames[i];
      else
        ::waitpid(p, nullptr, 0);
    }
    return refused.empty() ? "" : " (the kernel refuses: " + refused + ")";
  }

  static UniqueFd make_memfd(const char* name, std::string_view data, bool seal) {
    UniqueFd fd(::memfd_create(name, MFD_CLOEXEC | MFD_ALLOW_SEALING));
    if (!fd) throw SandboxError(errno_text("memfd_create"));
    if (!detail::write_all(fd.get(), data)) throw SandboxError(errno_text("write memfd"));
    ::lseek(fd.get(), 0, SEEK_SET);
    if (seal) ::fcntl(fd.get(), F_ADD_SEALS, F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_WRITE | F_SEAL_SEAL);
    return fd;
  }

  ExecResult run(Spare& s, const ExecJob& job) {
    ExecResult r;
    nlohmann::json head = detail::job_header(job);
    std::vector<UniqueFd> memfds;
    memfds.push_back(make_memfd("stdin", job.stdin_data, true));
    for (const auto& f : job.files) memfds.push_back(make_memfd("file", f.data, false));
    std::vector<int> raw;
    for (auto& m : memfds) raw.push_back(m.get());
    if (!detail::send_packet(s.ctl.get(), head.dump(), raw)) {
      r.sandbox_error = errno_text("send the job to the sandbox init");
      return r;
    }
    memfds.clear();

    const auto start = Clock::now();
    auto deadline = start + std::chrono::milliseconds(job.limits.wall_ms);
    auto kill_deadline = Clock::time_point::max();
    bool have_result = false, out_open = true, err_open = true, init_gone = false;
    nlohmann::json res;
    std::vector<UniqueFd> res_fds;
    auto finish_deadline = Clock::time_point::max();
    char buf[65536];

    auto ask_stop = [&](StopReason why) {
      if (r.stop == StopReason::none) r.stop = why;
      if (kill_deadline == Clock::time_point::max()) {
        std::string k = std::string("K") + stop_reason_name(why);
        detail::send_packet(s.ctl.get(), k);
        kill_deadline = Clock::now() + std::chrono::milliseconds(cfg_.kill_grace_ms);
      }
    };
    auto drain = [&](int fd, std::string& into, int64_t cap, bool& open, bool is_stdout) {
      ssize_t n = ::read(fd, buf, sizeof buf);
      if (n < 0 && (errno == EINTR || errno == EAGAIN)) return;
      if (n <= 0) {
        open = false;
        return;
      }
      int64_t room = cap - static_cast<int64_t>(into.size());
      if (room > 0) into.append(buf, static_cast<size_t>(std::min<int64_t>(room, n)));
      if (n > room) {
        if (is_stdout) {
          r.stdout_truncated = true;
          ask_stop(StopReason::output);
        } else {
          r.stderr_truncated = true;
        }
      }
    };

    while ((!have_result && !init_gone) || out_open || err_open) {
      auto now = Clock::now();
      if (!have_result && now >= deadline) ask_stop(StopReason::wall);
      if (!have_result && now >= kill_deadline && !init_gone) {
        ::kill(s.pid, SIGKILL);  // init did not answer: the kernel ends the whole pid namespace
        init_gone = true;
        finish_deadline = now + std::chrono::seconds(2);
      }
      if (now >= finish_deadline) break;  // an output pipe still open after everything died
      auto next = finish_deadline;
      if (!have_result && !init_gone)
        next = std::min(next, kill_deadline == Clock::time_point::max() ? deadline : kill_deadline);
      pollfd p[4] = {{have_result || init_gone ? -1 : s.ctl.get(), POLLIN, 0},
                     {out_open ? s.out_r.get() : -1, POLLIN, 0},
                     {err_open ? s.err_r.get() : -1, POLLIN, 0},
                     {owner_, POLLIN, 0}};
      int n = ::poll(p, 4, detail::poll_timeout_ms(next));
      if (n < 0 && errno != EINTR) break;
      if (p[3].revents) shutdown();  // the owner is gone (it never writes during a job)
      if (p[1].revents) drain(s.out_r.get(), r.stdout_data, job.limits.stdout_bytes, out_open, true);
      if (p[2].revents) drain(s.err_r.get(), r.stderr_data, job.limits.stderr_bytes, err_open, false);
      if (p[0].revents) {
        std::string msg;
        IoStatus st = detail::recv_packet(s.ctl.get(), msg, &res_fds, Clock::now());
        if (st == IoStatus::ok) {
          res = nlohmann::json::parse(msg, nullptr, false);
          have_result = true;
        } else if (st == IoStatus::closed || st == IoStatus::error) {
          init_gone = true;
          have_result = true;  // nothing more will come
        }
        if (have_result) finish_deadline = Clock::now() + std::chrono::seconds(2);
      }
    }
    if (res.is_object()) {
      if (res.contains("sandbox_error")) {
        r.sandbox_error = res["sandbox_error"].get<std::string>();
        return r;
      }
      r.started = res.value("started", false);
      r.exec_errno = res.value("exec_errno", 0);
      r.exit_code = res.value("exit_code", -1);
      r.signal = res.value("signal", 0);
      r.wall_ms = res.value("wall_ms", 0.0);
      r.cpu_ms = res.value("cpu_ms", 0.0);
      r.max_rss_kb = res.value("max_rss_kb", int64_t(0));
      r.tree_peak_kb = res.value("tree_peak_kb", int64_t(0));
      std::string stop = res.value("stop", "none");
      if (r.stop == StopReason::none) {
        if (stop == "memory") r.stop = StopReason::memory;
        if (stop == "cpu") r.stop = StopReason::cpu;
      }
      if (res.value("artifact", false) && !res_fds.empty()) {
        ::lseek(res_fds[0].get(), 0, SEEK_SET);
        r.has_artifact =
            detail::read_all_fd(res_fds[0].get(), r.artifact, uint64_t(job.limits.file_size_mb) << 20);
      }
    } else if (r.stop != StopReason::none) {
      // init was killed after the grace period: what we know is why.
      r.started = true;
      r.wall_ms = std::chrono::duration<double, std::milli>(Clock::now() - start).count();
      r.signal = SIGKILL;
    } else {
      r.sandbox_error = "the sandbox init ended without a report";
    }
    return r;
  }

  int owner_;
  uint32_t host_id_;
  ExecutorConfig cfg_;
  SeccompProgram seccomp_;
  Spare spare_;
  bool python_next_ = false;
  std::string fallback_ = cgroup_fallback();
  alignas(16) static inline char init_stack_[256 * 1024];
};

// Executor processes show this in ps, and a sandbox reading /proc/1/cmdline
// (its init is a copy of the executor) sees it instead of the owner's
// command line. The argument area is overwritten in place (PR_SET_MM would
// need CAP_SYS_RESOURCE, which containers often drop).
void set_process_title(int slot) {
  ::prctl(PR_SET_NAME, "rlwb-executor", 0, 0, 0);
  std::ifstream in("/proc/self/stat");
  std::string stat((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  auto close_paren = stat.rfind(')');
  if (close_paren == std::string::npos) return;
  std::istringstream fields(stat.substr(close_paren + 2));
  std::string f;
  unsigned long arg_start = 0, arg_end = 0;
  for (int i = 3; i <= 49 && fields >> f; ++i) {  // fields 48 and 49: arg_start, arg_end
    if (i == 48) arg_start = std::stoul(f);
    if (i == 49) arg_end = std::stoul(f);
  }
  if (arg_start == 0 || arg_end <= arg_start) return;
  char* area = reinterpret_cast<char*>(arg_start);
  size_t size = arg_end - arg_start;
  std::string title = "rlwb-sandbox executor " + std::to_string(slot);
  std::memset(area, 0, size);
  std::memcpy(area, title.data(), std::min(title.size(), size - 1));
}

}  // namespace

[[noreturn]] void detail::executor_main(int sock, int slot, const ExecutorConfig& cfg) {
  ::setpgid(0, 0);  // a terminal's Ctrl-C goes to the owner, which stops us in order
  sigset_t all;
  sigemptyset(&all);
  ::sigprocmask(SIG_SETMASK, &all, nullptr);
  for (int sig = 1; sig < NSIG; ++sig) ::signal(sig, SIG_DFL);
  int devnull = ::open("/dev/null", O_RDWR);
  if (devnull >= 0) {
    ::dup2(devnull, 0);
    ::dup2(devnull, 1);
  }
  detail::close_fds_except({sock});
  set_process_title(slot);
  ExecutorProcess(sock, slot, cfg).main();
}

namespace {

// The executor's program: rlwb-sandbox-executor (or rlwb-sandbox) if it can
// be found, else none (fork mode).
std::string executor_program(const ExecutorConfig& cfg) {
  if (!cfg.executable.empty()) return cfg.executable;
  try {
    return find_executor_binary();
  } catch (const SandboxError&) {
    return "";
  }
}

}  // namespace

// ---------------------------------------------------------------------------
// [SECTION] Executor (owner side)
// ---------------------------------------------------------------------------

struct Executor::Impl {
  int slot;
  ExecutorConfig cfg;
  pid_t pid = -1;
  UniqueFd sock;
  KernelSupport support;
  bool ready = false;  // the executor said its next sandbox is prepared (and we have not sent a job since)

  // Takes the executor's "ready" message if it is there within `wait`.
  // False on timeout; true when ready -- or broken (exec() then reports and restarts).
  bool take_ready(std::chrono::milliseconds wait) {
    if (ready || !sock) return true;
    pollfd p{sock.get(), POLLIN, 0};
    if (::poll(&p, 1, static_cast<int>(wait.count())) <= 0) return false;
    Message m;
    if (detail::recv_message(sock.get(), m, Clock::now() + std::chrono::seconds(5), 1 << 20) !=
            IoStatus::ok ||
        !m.header.value("ready", false)) {
      stop();  // out of step or dead: the next exec() restarts it
      return true;
    }
    ready = true;
    return true;
  }

  void start() {
    int sv[2];
    if (::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) != 0)
      throw SandboxError(errno_text("executor: socketpair"));
    UniqueFd mine(sv[0]), theirs(sv[1]);
    const std::string program = executor_program(cfg);
    pid_t p = ::fork();
    if (p < 0) throw SandboxError(errno_text("executor: fork"));
    if (p == 0) {
      mine.release();
      int fd = theirs.release();
      if (!program.empty()) {
        // fd 3 across exec (a dup2 target is not close-on-exec)
        if (fd == 3 ? ::fcntl(3, F_SETFD, 0) == 0 : ::dup2(fd, 3) == 3) {
          std::string s = std::to_string(slot), b = std::to_string(cfg.host_id_base),
                      g = std::to_string(cfg.kill_grace_ms);
          ::execl(program.c_str(), program.c_str(), "--executor", "3", s.c_str(), b.c_str(), g.c_str(),
                  static_cast<char*>(nullptr));
        }
        ::_exit(127);  // the owner sees the executor die at start and says so
      }
      detail::executor_main(fd, slot, cfg);
    }
    theirs.reset();
    pid = p;
    sock = std::move(mine);
    Message hello;
    IoStatus s = detail::recv_message(
        sock.get(), hello, Clock::now() + std::chrono::milliseconds(cfg.start_timeout_ms), 1 << 20);
    if (s != IoStatus::ok || !hello.header.value("ok", false)) {
      std::string why = s == IoStatus::ok ? hello.header.value("error", std::string("unknown error"))
                        : s == IoStatus::timeout
                            ? "no answer within " + std::to_string(cfg.start_timeout_ms) + " ms"
                            : "the executor process died at start";
      stop();
      throw SandboxError("sandbox executor " + std::to_string(slot) + " could not start: " + why);
    }
    support.namespaces = hello.header.value("namespaces", std::vector<std::string>{});
    support.fallbacks = hello.header.value("fallbacks", std::vector<std::string>{});
    ready = true;  // the hello comes after the first sandbox is prepared
  }

  void stop() {
    sock.reset();  // the executor exits when its socket closes
    if (pid <= 0) return;
    for (int i = 0; i < 100; ++i) {  // up to ~1 s
      if (::waitpid(pid, nullptr, WNOHANG) == pid) {
        pid = -1;
        return;
      }
      ::usleep(10000);
    }
    ::kill(pid, SIGKILL);
    ::waitpid(pid, nullptr, 0);
    pid = -1;
  }

  ExecResult fail(const std::string& why) {
    ExecResult r;
    r.sandbox_error = why;
    r.fallbacks = support.fallbacks;
    stop();
    try {
      start();
    } catch (const std::exception& e) {
      r.sandbox_error += "; restarting the executor failed: " + std::string(e.what());
    }
    return r;
  }
};

Executor::Executor(int slot, ExecutorConfig config) : impl_(std::make_unique<Impl>()) {
  impl_->slot = slot;
  impl_->cfg = config;
  impl_->start();
}

Executor::~Executor() { impl_->stop(); }

ExecResult Executor::exec(const ExecJob& job) {
  validate_limits(job.limits, "job limits");
  if (job.argv.empty()) throw SandboxError("job: empty argv");
  if (!impl_->sock) return impl_->fail("the executor is not running");
  // Wait for the sandbox it prepares after each job (bounded: preparing takes milliseconds).
  if (!impl_->take_ready(std::chrono::seconds(30)))
    return impl_->fail("executor " + std::to_string(impl_->slot) +
                       " did not prepare its next sandbox in time");
  if (!impl_->sock) {  // it broke while idle: start a new one for this job
    try {
      impl_->start();
    } catch (const std::exception& e) {
      return impl_->fail(e.what());
    }
  }
  impl_->ready = false;
  std::vector<std::string_view> blobs = {job.stdin_data};
  for (const auto& f : job.files) blobs.push_back(f.data);
  if (detail::send_message(impl_->sock.get(), detail::job_header(job), blobs,
                           Clock::now() + std::chrono::seconds(30)) != IoStatus::ok)
    return impl_->fail("could not send the job to executor " + std::to_string(impl_->slot));
  // Bound: the wall limit, init's kill grace, the executor's own 2 s drain,
  // and preparing a sandbox if none was ready.
  auto bound = std::chrono::milliseconds(job.limits.wall_ms + impl_->cfg.kill_grace_ms + 15000);
  Message m;
  IoStatus s = detail::recv_message(impl_->sock.get(), m, Clock::now() + bound, kMaxMessageBytes);
  if (s != IoStatus::ok)
    return impl_->fail("executor " + std::to_string(impl_->slot) +
                       (s == IoStatus::timeout ? " did not answer in time" : " died during the job"));
  return detail::result_from_message(std::move(m));
}

bool Executor::wait_ready(std::chrono::milliseconds timeout) { return impl_->take_ready(timeout); }

const KernelSupport& Executor::kernel_support() const { return impl_->support; }
pid_t Executor::pid() const { return impl_->pid; }
int Executor::slot() const { return impl_->slot; }
uint32_t Executor::host_uid() const { return impl_->cfg.host_id_base + static_cast<uint32_t>(impl_->slot); }

}  // namespace rlwb::sandbox
