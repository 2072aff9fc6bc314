// The file system every sandbox of one executor sees, built once when the
// executor process starts (it then lives in its own mount namespace with
// this tree as its root, and each sandbox's mount namespace is a cheap copy
// of it):
//   /            read-only tmpfs
//   /usr         read-only bind of the host's /usr (nosuid, nodev);
//                /bin, /lib, /lib64, /sbin mirror the host (symlinks or binds)
//   /etc         a few read-only binds the runtimes need (ld.so.cache,
//                alternatives, python3*) plus synthetic passwd, group, hosts
//   /dev         null, zero, full, random, urandom; fd -> /proc/self/fd;
//                shm -> /tmp (so POSIX semaphores work inside the work dir)
//   /proc        mounted afresh by each sandbox for its own pid namespace
//   /tmp         the work directory: a fresh tmpfs per execution
// Nothing else of the host (home directories, /work, /root, /var, /run,
// sockets) exists in it. Used by the executor process only.
#pragma once

#include <string>

namespace rlwb::sandbox::detail {

// Unshares the mount namespace of the calling (single-threaded, root)
// process, builds the tree above and pivots into it. Throws SandboxError
// naming the step that failed.
void enter_sandbox_root(unsigned sandbox_uid_inside);

}  // namespace rlwb::sandbox::detail
