#include "sandbox/sandbox_root.h"

#include <fcntl.h>
#include <glob.h>
#include <sched.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "sandbox/fd_channel.h"
#include "sandbox/sandbox_error.h"

namespace rlwb::sandbox::detail {
namespace {

const char* kNewRoot = "/tmp";  // a mount point that exists on every Linux host

[[noreturn]] void fail(const std::string& step) {
  throw SandboxError("sandbox root: " + step + ": " + std::strerror(errno) +
                     (errno == EPERM ? " (the sandbox needs root: CAP_SYS_ADMIN and CAP_SETUID)" : ""));
}

void do_mount(const char* src, const std::string& dst, const char* type, unsigned long flags,
              const char* data = nullptr) {
  if (::mount(src, dst.c_str(), type, flags, data) != 0)
    fail(std::string("mount ") + (src ? src : type ? type : "") + " on " + dst);
}

void make_dir(const std::string& path) {
  if (::mkdir(path.c_str(), 0755) != 0 && errno != EEXIST) fail("mkdir " + path);
}

void make_file(const std::string& path, const std::string& content, mode_t mode = 0644) {
  int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, mode);
  if (fd < 0) fail("create " + path);
  bool ok = write_all(fd, content);
  ::close(fd);
  if (!ok) fail("write " + path);
}

// Mirrors host path `src` at the same place under the new root: a symlink
// stays a symlink; a directory or file becomes a read-only bind.
void mirror(const std::string& src, bool read_only, unsigned long extra_flags) {
  struct stat st;
  if (::lstat(src.c_str(), &st) != 0) return;  // absent on this host: nothing to mirror
  std::string dst = std::string(kNewRoot) + src;
  if (S_ISLNK(st.st_mode)) {
    char target[4096];
    ssize_t n = ::readlink(src.c_str(), target, sizeof target - 1);
    if (n < 0) fail("readlink " + src);
    target[n] = '\0';
    if (::symlink(target, dst.c_str()) != 0 && errno != EEXIST) fail("symlink " + dst);
    return;
  }
  if (S_ISDIR(st.st_mode))
    make_dir(dst);
  else
    make_file(dst, "");
  do_mount(src.c_str(), dst, nullptr, MS_BIND);
  unsigned long flags = MS_BIND | MS_REMOUNT | MS_NOSUID | extra_flags | (read_only ? MS_RDONLY : 0);
  do_mount(nullptr, dst, nullptr, flags);
}

}  // namespace

void enter_sandbox_root(unsigned uid) {
  if (::unshare(CLONE_NEWNS) != 0) fail("unshare(CLONE_NEWNS)");
  do_mount(nullptr, "/", nullptr, MS_REC | MS_PRIVATE);
  do_mount("rlwb-sandbox-root", kNewRoot, "tmpfs", MS_NOSUID | MS_NODEV, "size=4m,mode=0755");
  const std::string R = kNewRoot;

  make_dir(R + "/usr");
  mirror("/usr", true, MS_NODEV);
  for (const char* top : {"/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32"})
    mirror(top, true, MS_NODEV);

  make_dir(R + "/etc");
  for (const char* e : {"/etc/ld.so.cache", "/etc/ld.so.conf", "/etc/ld.so.conf.d", "/etc/alternatives",
                        "/etc/localtime", "/etc/bash.bashrc"})
    mirror(e, true, MS_NODEV | MS_NOEXEC);
  glob_t g{};
  if (::glob("/etc/python3*", 0, nullptr, &g) == 0)
    for (size_t i = 0; i < g.gl_pathc; ++i) mirror(g.gl_pathv[i], true, MS_NODEV | MS_NOEXEC);
  ::globfree(&g);
  const std::string u = std::to_string(uid);
  make_file(R + "/etc/passwd",
            "root:x:0:0:root:/root:/bin/sh\nsandbox:x:" + u + ":" + u +
                ":sandbox:/tmp:/bin/sh\nnobody:x:65534:65534:nobody:/nonexistent:/bin/false\n");
  make_file(R + "/etc/group", "root:x:0:\nsandbox:x:" + u + ":\nnogroup:x:65534:\n");
  make_file(R + "/etc/hosts", "127.0.0.1 localhost sandbox\n::1 localhost\n");
  make_file(R + "/etc/hostname", "sandbox\n");
  make_file(R + "/etc/nsswitch.conf", "passwd: files\ngroup: files\nhosts: files dns\n");

  make_dir(R + "/dev");
  for (const char* d : {"/dev/null", "/dev/zero", "/dev/full", "/dev/random", "/dev/urandom"})
    mirror(d, false, MS_NOEXEC);
  for (auto [name, target] : {std::pair{"fd", "/proc/self/fd"},
                              {"stdin", "/proc/self/fd/0"},
                              {"stdout", "/proc/self/fd/1"},
                              {"stderr", "/proc/self/fd/2"},
                              {"shm", "/tmp"}})
    if (::symlink(target, (R + "/dev/" + name).c_str()) != 0) fail(std::string("symlink /dev/") + name);

  make_dir(R + "/proc");
  make_dir(R + "/tmp");
  make_dir(R + "/.old-root");
  // The executor's own view of the host's processes (it writes the
  // sandboxes' uid maps through it); each sandbox mounts its own on top.
  do_mount("proc", R + "/proc", "proc", MS_NOSUID | MS_NODEV | MS_NOEXEC);

  if (::syscall(SYS_pivot_root, kNewRoot, (R + "/.old-root").c_str()) != 0) fail("pivot_root");
  if (::chdir("/") != 0) fail("chdir /");
  if (::umount2("/.old-root", MNT_DETACH) != 0) fail("umount the old root");
  if (::rmdir("/.old-root") != 0) fail("rmdir /.old-root");
  do_mount(nullptr, "/", nullptr, MS_REMOUNT | MS_BIND | MS_RDONLY | MS_NOSUID | MS_NODEV);
}

}  // namespace rlwb::sandbox::detail
