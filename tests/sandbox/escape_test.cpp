// The escape suite: programs that try to exhaust, escape or snoop on the
// host. Each must end in the right verdict and leave the host untouched
// (no process left behind, no file written, no host process harmed).
#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>

#include <chrono>
#include <future>
#include <sstream>
#include <thread>

#include "tests/sandbox/sandbox_test_util.h"
#include "tests/test_paths.h"

namespace rlwb::sandbox::testing {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

class SandboxEscapeTest : public ::testing::Test {
 protected:
  void SetUp() override { shared_sandbox(); }
  void TearDown() override { EXPECT_TRUE(host_has_no_sandbox_processes()); }
};

#define EXPECT_VERDICT(v, expected)                                                  \
  EXPECT_EQ(outcome_name((v).outcome), std::string(outcome_name(expected)))          \
      << "detail: " << (v).detail << "\nstdout: " << (v).stdout_data.substr(0, 2000) \
      << "\nstderr: " << (v).stderr_data.substr(0, 2000)

TEST_F(SandboxEscapeTest, ForkBombIsCappedAndEndsInTimeout) {
  Limits l = quick_limits();
  l.processes = 32;
  auto run = std::async(std::launch::async, [&] {
    return run_program(
        Language::python3,
        "import os\nwhile True:\n    try:\n        os.fork()\n    except OSError:\n        pass\n", l);
  });
  size_t most = 0;
  while (run.wait_for(std::chrono::milliseconds(50)) != std::future_status::ready)
    most = std::max(most, running_program_processes());
  Verdict v = run.get();
  EXPECT_VERDICT(v, Outcome::timeout);
  EXPECT_LE(most, 32u) << "more processes than RLIMIT_NPROC allows";
  EXPECT_LT(v.wall_ms, l.wall_ms + 1500);
}

TEST_F(SandboxEscapeTest, ShellForkBombDiesWithItsShell) {
  // The classic one. The script returns at once and leaves the bomb behind
  // (ok), unless the bomb fills the process table before the shell's own
  // second fork, which bash then retries until the wall limit (timeout).
  // Either way the run ends on time and the bomb dies with it (TearDown
  // checks the host).
  Verdict v = run_program(Language::bash, ":(){ :|:& };:\n");
  EXPECT_TRUE(v.outcome == Outcome::ok || v.outcome == Outcome::timeout)
      << outcome_name(v.outcome) << " " << v.detail;
  EXPECT_LT(v.wall_ms, quick_limits().wall_ms + 500);
}

TEST_F(SandboxEscapeTest, ShellForkBombThatWaitsTimesOut) {
  Limits l = quick_limits();
  l.processes = 32;
  l.wall_ms = 1500;
  Verdict v = run_program(Language::bash, ":(){ :|:& };:\nwait\nsleep 10\n", l);
  EXPECT_VERDICT(v, Outcome::timeout);
}

TEST_F(SandboxEscapeTest, ThreadBombHitsTheProcessLimit) {
  Limits l = quick_limits();
  l.processes = 32;
  Verdict v = run_program(Language::python3,
                          "import threading, time\n"
                          "while True:\n"
                          "    threading.Thread(target=time.sleep, args=(100,), daemon=True).start()\n",
                          l);
  EXPECT_VERDICT(v, Outcome::runtime_error);
  EXPECT_THAT(v.stderr_data, HasSubstr("can't start new thread"));
}

TEST_F(SandboxEscapeTest, MemoryBombInOneAllocation) {
  Verdict v = run_program(Language::python3, "x = bytearray(1 << 34)\nprint('allocated')\n");
  EXPECT_VERDICT(v, Outcome::memory_limit);
  EXPECT_THAT(v.stdout_data, Not(HasSubstr("allocated")));
}

TEST_F(SandboxEscapeTest, MemoryBombTouchingPages) {
  Limits l = quick_limits();
  l.memory_mb = 128;
  Verdict v =
      run_program(Language::python3, "chunks = []\nwhile True:\n    chunks.append(b'x' * (8 << 20))\n", l);
  EXPECT_VERDICT(v, Outcome::memory_limit);
  EXPECT_LE(v.peak_memory_kb, 2 * 128 * 1024 + 64 * 1024);
}

TEST_F(SandboxEscapeTest, MemorySpreadOverProcessesIsCaughtByTheWatchdog) {
  // Each process stays under the per-process address-space limit; together
  // they exceed the memory limit. Without a memory cgroup, the watchdog
  // must see the sum.
  Limits l = quick_limits();
  l.memory_mb = 128;
  l.wall_ms = 5000;
  Verdict v = run_program(Language::python3,
                          "import os, time\n"
                          "for i in range(6):\n"
                          "    if os.fork() == 0:\n"
                          "        block = b'x' * (60 << 20)\n"
                          "        time.sleep(30)\n"
                          "time.sleep(30)\n",
                          l);
  EXPECT_VERDICT(v, Outcome::memory_limit);
  EXPECT_THAT(v.detail, HasSubstr("processes"));
}

TEST_F(SandboxEscapeTest, BusyLoopHitsTheCpuLimit) {
  Limits l = quick_limits();
  l.cpu_ms = 500;
  l.wall_ms = 30000;  // generous: on a loaded machine CPU time accrues slowly
  Verdict v = run_program(Language::python3, "while True:\n    pass\n", l);
  EXPECT_VERDICT(v, Outcome::timeout);
  EXPECT_THAT(v.detail, HasSubstr("CPU"));
  EXPECT_GE(v.cpu_ms, 450);
}

TEST_F(SandboxEscapeTest, SleepPastTheWallClockIsKilledOnTime) {
  Limits l = quick_limits();
  l.wall_ms = 1000;
  auto t0 = std::chrono::steady_clock::now();
  Verdict v = run_program(Language::python3, "import time\ntime.sleep(60)\n", l);
  double took = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
  EXPECT_VERDICT(v, Outcome::timeout);
  EXPECT_THAT(v.detail, HasSubstr("wall"));
  EXPECT_LT(took, 2500);
}

TEST_F(SandboxEscapeTest, MultithreadedCpuBurnCountsEveryThread) {
  Limits l = quick_limits();
  l.cpu_ms = 1000;
  l.wall_ms = 30000;
  Verdict v = run_program(
      Language::c,
      "#include <pthread.h>\n"
      "static void* spin(void* p) { for (volatile unsigned long i = 0;; ++i) {} return p; }\n"
      "int main(void) { pthread_t t[4]; for (int i = 0; i < 4; ++i) pthread_create(&t[i], 0, spin, "
      "0);\n"
      "  spin(0); }\n",
      l);
  EXPECT_VERDICT(v, Outcome::timeout);
  EXPECT_THAT(v.detail, HasSubstr("CPU")) << "the CPU limit, not the wall clock, must stop it";
  EXPECT_GE(v.cpu_ms, 500) << "CPU time of the threads is measured";  // rusage may trail the limit a little
}

TEST_F(SandboxEscapeTest, HugeStdoutIsCut) {
  Limits l = quick_limits();
  l.stdout_bytes = 100000;
  Verdict v = run_program(Language::python3, "while True:\n    print('x' * 1000)\n", l);
  EXPECT_VERDICT(v, Outcome::output_limit);
  EXPECT_EQ(v.stdout_data.size(), 100000u);
  EXPECT_TRUE(v.stdout_truncated);
}

TEST_F(SandboxEscapeTest, HugeFileHitsTheFileSizeLimit) {
  Verdict py = run_program(Language::python3, "open('big', 'wb').write(b'x' * (64 << 20))\n");
  EXPECT_VERDICT(py, Outcome::output_limit);
  Verdict c = run_program(Language::c,
                          "#include <stdio.h>\n#include <string.h>\n"
                          "int main(void) { static char b[1 << 20]; memset(b, 'x', sizeof b);\n"
                          "  FILE* f = fopen(\"big\", \"wb\"); for (int i = 0; i < 64; ++i) "
                          "fwrite(b, 1, sizeof b, f);\n"
                          "  fclose(f); puts(\"wrote\"); }\n");
  EXPECT_VERDICT(c, Outcome::output_limit);
  EXPECT_EQ(c.signal, SIGXFSZ);
}

TEST_F(SandboxEscapeTest, FdExhaustionStopsAtTheLimit) {
  Verdict v = run_program(Language::python3,
                          "fs = []\n"
                          "try:\n"
                          "    while True:\n"
                          "        fs.append(open('/dev/null'))\n"
                          "except OSError as e:\n"
                          "    print(len(fs), e.errno)\n");
  EXPECT_VERDICT(v, Outcome::ok);
  int opened = 0, err = 0;
  ASSERT_EQ(std::sscanf(v.stdout_data.c_str(), "%d %d", &opened, &err), 2) << v.stdout_data;
  EXPECT_LE(opened, quick_limits().open_files);
  EXPECT_EQ(err, EMFILE);
}

TEST_F(SandboxEscapeTest, CannotConnectToAHostServerOnLoopback) {
  int srv = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK, 0);
  ASSERT_GE(srv, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  ASSERT_EQ(bind(srv, reinterpret_cast<sockaddr*>(&addr), sizeof addr), 0);
  ASSERT_EQ(listen(srv, 16), 0);
  socklen_t len = sizeof addr;
  getsockname(srv, reinterpret_cast<sockaddr*>(&addr), &len);
  const int port = ntohs(addr.sin_port);

  Verdict py = run_program(
      Language::python3, "import socket\ns = socket.create_connection(('127.0.0.1', " + std::to_string(port) +
                             "), timeout=1)\ns.sendall(b'escaped')\nprint('connected')\n");
  EXPECT_VERDICT(py, Outcome::runtime_error);
  EXPECT_THAT(py.stderr_data, HasSubstr("Operation not permitted"));
  Verdict c =
      run_program(Language::c,
                  "#include <stdio.h>\n#include <errno.h>\n#include <string.h>\n#include <sys/socket.h>\n"
                  "int main(void) { int s = socket(AF_INET, SOCK_STREAM, 0);\n"
                  "  printf(\"%d %s\\n\", s, s < 0 ? strerror(errno) : \"ok\"); }\n");
  EXPECT_VERDICT(c, Outcome::ok);
  EXPECT_THAT(c.stdout_data, HasSubstr("-1 Operation not permitted"));

  pollfd p{srv, POLLIN, 0};
  EXPECT_EQ(poll(&p, 1, 100), 0) << "the host server saw a connection from the sandbox";
  close(srv);
}

TEST_F(SandboxEscapeTest, DnsLookupFails) {
  Verdict v = run_program(Language::python3, "import socket\nprint(socket.getaddrinfo('example.com', 80))\n");
  EXPECT_VERDICT(v, Outcome::runtime_error);
  EXPECT_THAT(v.stderr_data, HasSubstr("gaierror"));
}

TEST_F(SandboxEscapeTest, CannotReadFilesOutsideTheSandbox) {
  std::string source_file = std::string(rlwb::testing::kSourceDir) + "/CMakeLists.txt";
  ASSERT_EQ(access(source_file.c_str(), R_OK), 0);
  Verdict v =
      run_program(Language::python3,
                  "import os\n"
                  "paths = ['" +
                      source_file +
                      "', '/root/.bashrc', '/root', '/etc/shadow', '/home',\n"
                      "         '/proc/1/environ', '/proc/1/root/etc/passwd', '/proc/1/mem', '/var/log',\n"
                      "         '/sys/kernel', '/run', '/work']\n"
                      "found = []\n"
                      "for p in paths:\n"
                      "    try:\n"
                      "        if os.path.isdir(p): os.listdir(p)\n"
                      "        else: open(p, 'rb').read(1)\n"
                      "        found.append(p)\n"
                      "    except OSError:\n"
                      "        pass\n"
                      "print('readable:', found)\n");
  EXPECT_VERDICT(v, Outcome::ok);
  EXPECT_THAT(v.stdout_data, HasSubstr("readable: []"));
}

TEST_F(SandboxEscapeTest, CannotWriteOutsideTheWorkDir) {
  char host_dir[] = "/tmp/rlwb-escape-XXXXXX";
  ASSERT_NE(mkdtemp(host_dir), nullptr);
  std::string target = std::string(host_dir) + "/written-by-sandbox";
  Verdict v = run_program(
      Language::python3,
      "import os\n"
      "ok = []\n"
      "for p in ['/x', '/usr/x', '/etc/x', '/dev/x', '/proc/x', '/tmp/../x', '/usr/bin/python3',\n"
      "          '" +
          target + "', '" + std::string(rlwb::testing::kSourceDir) +
          "/x']:\n"
          "    try:\n"
          "        with open(p, 'a') as f: f.write('x')\n"
          "        ok.append(p)\n"
          "    except OSError:\n"
          "        pass\n"
          "open('inside', 'w').write('fine')\n"
          "print('written:', ok, open('inside').read())\n");
  EXPECT_VERDICT(v, Outcome::ok);
  // /tmp is the sandbox's own tmpfs: writing host_dir's path inside it is allowed
  // only if it exists there (it does not), so nothing outside the work dir was written.
  EXPECT_THAT(v.stdout_data, HasSubstr("written: [] fine"));
  struct stat st;
  EXPECT_NE(stat(target.c_str(), &st), 0) << "the sandbox wrote into the host's /tmp";
  EXPECT_NE(stat((std::string(rlwb::testing::kSourceDir) + "/x").c_str(), &st), 0);
  rmdir(host_dir);
}

TEST_F(SandboxEscapeTest, CannotKillTheParentOrAnyHostProcess) {
  pid_t victim = fork();
  if (victim == 0) {
    execl("/bin/sleep", "sleep", "30", nullptr);
    _exit(127);
  }
  ASSERT_GT(victim, 0);
  Verdict v = run_program(Language::python3,
                          "import os, signal\n"
                          "hits = 0\n"
                          "for pid in [" +
                              std::to_string(victim) + ", " + std::to_string(getpid()) +
                              ", os.getppid(), 1] + list(range(2, 5000)):\n"
                              "    if pid == os.getpid(): continue\n"
                              "    try:\n"
                              "        os.kill(pid, signal.SIGKILL); hits += 1\n"
                              "    except OSError:\n"
                              "        pass\n"
                              "try:\n"
                              "    os.kill(-1, signal.SIGKILL)\n"
                              "except OSError:\n"
                              "    pass\n"
                              "print('signalled', hits)\n");
  EXPECT_VERDICT(v, Outcome::ok);
  EXPECT_EQ(waitpid(victim, nullptr, WNOHANG), 0) << "a host process was killed from the sandbox";
  kill(victim, SIGKILL);
  waitpid(victim, nullptr, 0);
  // The executors survived too.
  EXPECT_VERDICT(run_program(Language::python3, "print(1)"), Outcome::ok);
}

TEST_F(SandboxEscapeTest, PtraceIsAPolicyViolation) {
  Verdict v =
      run_program(Language::c,
                  "#include <sys/ptrace.h>\n#include <stdio.h>\n"
                  "int main(void) { long r = ptrace(PTRACE_ATTACH, 1, 0, 0); printf(\"%ld\\n\", r); }\n");
  EXPECT_VERDICT(v, Outcome::policy_violation);
  EXPECT_EQ(v.signal, SIGSYS);
  Verdict py = run_program(Language::python3, "import ctypes\nprint(ctypes.CDLL(None).ptrace(0, 0, 0, 0))\n");
  EXPECT_VERDICT(py, Outcome::policy_violation);
}

TEST_F(SandboxEscapeTest, MountUnshareAndSetnsArePolicyViolations) {
  const char* calls[] = {
      "unshare(CLONE_NEWUSER)",
      "mount(\"none\", \"/tmp\", \"tmpfs\", 0, 0)",
      "setns(open(\"/proc/self/ns/net\", O_RDONLY), 0)",
      "syscall(SYS_clone, CLONE_NEWUSER | SIGCHLD, 0, 0, 0, 0)",
      "chroot(\"/tmp\")",
      "syscall(SYS_pivot_root, \"/tmp\", \"/tmp\")",
  };
  for (const char* call : calls) {
    Verdict v = run_program(
        Language::c,
        std::string("#define _GNU_SOURCE\n#include <sched.h>\n#include <stdio.h>\n#include <fcntl.h>\n"
                    "#include <signal.h>\n#include <unistd.h>\n#include <sys/mount.h>\n#include "
                    "<sys/syscall.h>\n"
                    "int main(void) { long r = ") +
            call + "; printf(\"returned %ld\\n\", r); }\n");
    EXPECT_VERDICT(v, Outcome::policy_violation) << call;
  }
}

TEST_F(SandboxEscapeTest, Clone3GetsEnosysAndIoUringIsAPolicyViolation) {
  Verdict v =
      run_program(Language::c,
                  "#define _GNU_SOURCE\n#include <linux/sched.h>\n#include <sched.h>\n#include "
                  "<signal.h>\n#include <stdio.h>\n"
                  "#include <errno.h>\n#include <string.h>\n#include <unistd.h>\n#include <sys/syscall.h>\n"
                  "int main(void) { struct clone_args a = {0}; a.flags = CLONE_NEWUSER | CLONE_NEWNS; "
                  "a.exit_signal = SIGCHLD;\n"
                  "  long r = syscall(SYS_clone3, &a, sizeof a); if (r == 0) _exit(0);\n"
                  "  printf(\"clone3 %ld %s\\n\", r, strerror(errno)); }\n");
  EXPECT_VERDICT(v, Outcome::ok);
  EXPECT_THAT(v.stdout_data, HasSubstr("clone3 -1 Function not implemented"));
  Verdict u = run_program(Language::c,
                          "#include <linux/io_uring.h>\n#include <stdio.h>\n#include "
                          "<unistd.h>\n#include <sys/syscall.h>\n"
                          "int main(void) { struct io_uring_params p = {0}; long r = "
                          "syscall(__NR_io_uring_setup, 8, &p);\n"
                          "  printf(\"io_uring %ld\\n\", r); }\n");
  EXPECT_VERDICT(u, Outcome::policy_violation);
}

TEST_F(SandboxEscapeTest, ThirtyTwoBitSyscallIsAPolicyViolation) {
  Verdict v = run_program(Language::c,
                          "#include <stdio.h>\n"
                          "int main(void) { long r; __asm__ volatile(\"int $0x80\" : \"=a\"(r) : "
                          "\"a\"(20L) : \"memory\");\n"
                          "  printf(\"getpid via int 0x80: %ld\\n\", r); }\n");
  EXPECT_VERDICT(v, Outcome::policy_violation);
}

TEST_F(SandboxEscapeTest, SetuidBinariesGiveNoPrivilege) {
  struct stat st;
  if (stat("/usr/bin/su", &st) != 0 || !(st.st_mode & S_ISUID)) GTEST_SKIP() << "no setuid /usr/bin/su here";
  Verdict v = run_program(Language::bash,
                          "ls -l /usr/bin/su\n"
                          "/usr/bin/su -c 'id -u > /tmp/became' root < /dev/null; echo \"su exit $?\"\n"
                          "cat /tmp/became 2>/dev/null\n"
                          "echo \"uid $(id -u) euid $(id -u -r)\"\n"
                          "grep NoNewPrivs /proc/self/status\n");
  EXPECT_VERDICT(v, Outcome::ok);
  EXPECT_THAT(v.stdout_data, HasSubstr("-rwsr-xr-x"));  // the bit is there...
  EXPECT_THAT(v.stdout_data, HasSubstr("uid 1000 euid 1000"));
  EXPECT_THAT(v.stdout_data, Not(HasSubstr("\n0\n")));  // ...and su never ran anything as root
  EXPECT_THAT(v.stdout_data, HasSubstr("NoNewPrivs:\t1"));
}

TEST_F(SandboxEscapeTest, ProcShowsOnlyTheSandbox) {
  Verdict v = run_program(Language::python3,
                          "import os\n"
                          "pids = sorted(int(p) for p in os.listdir('/proc') if p.isdigit())\n"
                          "cmds = []\n"
                          "for p in pids:\n"
                          "    try: cmds.append(open(f'/proc/{p}/cmdline', "
                          "'rb').read().replace(b'\\0', b' ').decode().strip())\n"
                          "    except OSError: cmds.append('?')\n"
                          "print(len(pids), pids[:5])\n"
                          "for c in cmds: print('cmd:', c)\n"
                          "try:\n"
                          "    open('/proc/1/environ').read(); print('environ readable')\n"
                          "except OSError as e: print('environ', e.errno)\n");
  EXPECT_VERDICT(v, Outcome::ok);
  EXPECT_THAT(v.stdout_data, HasSubstr("2 [1, 2]"));  // init and the program itself
  // init shows the executor's title, not the command line of the process that started it
  EXPECT_THAT(v.stdout_data, HasSubstr("cmd: rlwb-sandbox"));
  EXPECT_THAT(v.stdout_data, Not(HasSubstr("escape_test")));
  EXPECT_THAT(v.stdout_data, HasSubstr("environ 13"));  // EACCES
  EXPECT_THAT(v.stdout_data, Not(HasSubstr(rlwb::testing::kSourceDir)));
}

TEST_F(SandboxEscapeTest, OrphanedBackgroundProcessesDieWithTheRun) {
  Verdict v = run_program(Language::bash,
                          "readlink /proc/self/ns/pid\n"
                          "(setsid sleep 300 &)\n"
                          "nohup sleep 301 > /dev/null 2>&1 &\n"
                          "disown\n"
                          "python3 -c 'import os\nif os.fork() == 0:\n    os.setsid()\n    import "
                          "time; time.sleep(302)' &\n"
                          "echo started\n");
  EXPECT_VERDICT(v, Outcome::ok);
  EXPECT_THAT(v.stdout_data, HasSubstr("started"));
  // The run's pid namespace is gone: no host process is still in it.
  const std::string ns = v.stdout_data.substr(0, v.stdout_data.find('\n'));
  ASSERT_THAT(ns, HasSubstr("pid:["));
  bool alive = true;
  for (int i = 0; i < 100 && alive; ++i) {
    alive = false;
    DIR* d = opendir("/proc");
    while (dirent* e = d ? readdir(d) : nullptr) {
      char link[128];
      ssize_t n = readlink((std::string("/proc/") + e->d_name + "/ns/pid").c_str(), link, sizeof link - 1);
      if (n > 0 && std::string(link, static_cast<size_t>(n)) == ns) alive = true;
    }
    if (d) closedir(d);
    if (alive) usleep(10000);
  }
  EXPECT_FALSE(alive) << "a process of the finished run is still alive in " << ns;
  // TearDown checks the sandbox users' processes as well.
}

TEST_F(SandboxEscapeTest, NamespacesAreFreshForEveryRun) {
  auto ns = [] {
    return run_program(Language::bash,
                       "for n in user pid net mnt ipc uts cgroup; do readlink /proc/self/ns/$n; done\n");
  };
  Verdict a = ns(), b = ns();
  EXPECT_VERDICT(a, Outcome::ok);
  char host[256];
  for (const char* n : {"user", "pid", "net", "mnt", "ipc", "uts", "cgroup"}) {
    ssize_t len = readlink((std::string("/proc/self/ns/") + n).c_str(), host, sizeof host - 1);
    ASSERT_GT(len, 0);
    host[len] = '\0';
    EXPECT_THAT(a.stdout_data, Not(HasSubstr(host))) << n << " namespace shared with the host";
  }
  EXPECT_NE(a.stdout_data, b.stdout_data) << "two runs shared namespaces";
}

std::vector<std::string> lines_of(const std::string& s) {
  std::vector<std::string> out;
  std::istringstream in(s);
  for (std::string l; std::getline(in, l);) out.push_back(l);
  return out;
}

// Each prepared sandbox serves one execution: of two runs in a row on the
// same executor (the second in the sandbox prepared after the first), the
// second sees a fresh pid namespace (its own pid is 2, pid 1 is our init,
// none of the first run's processes), a fresh work dir and no SysV IPC
// object of the first run. (Namespace inode numbers cannot show this: the
// kernel reuses the numbers of namespaces it has freed.)
TEST_F(SandboxEscapeTest, ConsecutiveRunsOnOneExecutorShareNothing) {
  PoolOptions o;
  o.executors = 1;
  o.executor.host_id_base = host_id_base() + kExecutors;  // a uid of its own
  LocalSandbox box(o);
  RunRequest r;
  r.language = Language::bash;
  r.limits = quick_limits();
  r.program =
      "echo \"pid=$$ pid1=$(cat /proc/1/comm)\"\n"
      "echo \"files=$(ls -A /tmp | tr '\\n' ' ')\"\n"
      "echo \"procs=$(cat /proc/[0-9]*/comm | sort -u | tr '\\n' ' ')\"\n"
      "echo \"shm=$(tail -n +2 /proc/sysvipc/shm | wc -l)\"\n"
      "echo left > /tmp/left-by-an-earlier-run\n"
      "ipcmk -M 4096 > /dev/null\n"
      "echo \"shm after ipcmk=$(tail -n +2 /proc/sysvipc/shm | wc -l)\"\n"
      "(exec -a left-by-an-earlier-run sleep 30 &)\n";
  Verdict a = box.run(r), b = box.run(r);
  EXPECT_VERDICT(a, Outcome::ok);
  EXPECT_VERDICT(b, Outcome::ok);
  auto la = lines_of(a.stdout_data), lb = lines_of(b.stdout_data);
  ASSERT_EQ(la.size(), 5u) << a.stdout_data;
  ASSERT_EQ(lb.size(), 5u) << b.stdout_data;
  EXPECT_EQ(la[4], "shm after ipcmk=1")
      << "the first run left nothing to find; its stderr: " << a.stderr_data;
  EXPECT_EQ(lb[0], "pid=2 pid1=rlwb-init");
  EXPECT_EQ(lb[1], "files=main.sh ");
  EXPECT_THAT(lb[2], Not(HasSubstr("sleep")));
  EXPECT_THAT(lb[2], Not(HasSubstr("left-by")));
  EXPECT_EQ(lb[3], "shm=0");
}

// Sandboxes that exist at the same time never share a namespace of any kind.
TEST_F(SandboxEscapeTest, SandboxesAliveAtTheSameTimeHaveDistinctNamespaces) {
  auto ns = [] {
    return run_program(Language::bash,
                       "for n in user pid net mnt ipc uts cgroup; do readlink /proc/self/ns/$n; "
                       "done\nsleep 0.5\n");
  };
  auto first = std::async(std::launch::async, ns), second = std::async(std::launch::async, ns);
  Verdict a = first.get(), b = second.get();
  EXPECT_VERDICT(a, Outcome::ok);
  EXPECT_VERDICT(b, Outcome::ok);
  auto la = lines_of(a.stdout_data), lb = lines_of(b.stdout_data);
  ASSERT_EQ(la.size(), 7u) << a.stdout_data;
  ASSERT_EQ(lb.size(), 7u) << b.stdout_data;
  for (size_t i = 0; i < 7; ++i) EXPECT_NE(la[i], lb[i]) << "two sandboxes share " << la[i];
}

}  // namespace
}  // namespace rlwb::sandbox::testing
