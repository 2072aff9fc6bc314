#include "sandbox/fd_channel.h"

#include <fcntl.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <climits>
#include <cstring>

namespace rlwb::sandbox::detail {

void UniqueFd::reset(int fd) {
  if (fd_ >= 0) ::close(fd_);
  fd_ = fd;
}

int poll_timeout_ms(Clock::time_point deadline) {
  if (deadline == kNoDeadline) return -1;
  auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now()).count();
  if (left <= 0) return 0;
  return static_cast<int>(std::min<int64_t>(left + 1, INT_MAX));
}

namespace {

IoStatus wait_fd(int fd, short events, Clock::time_point deadline) {
  for (;;) {
    pollfd p{fd, events, 0};
    int n = ::poll(&p, 1, poll_timeout_ms(deadline));
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return IoStatus::error;
    if (n == 0) return IoStatus::timeout;
    return IoStatus::ok;
  }
}

IoStatus write_fully(int fd, const char* p, size_t n, Clock::time_point deadline) {
  while (n > 0) {
    ssize_t w = ::send(fd, p, n, MSG_NOSIGNAL | MSG_DONTWAIT);
    if (w > 0) {
      p += w;
      n -= static_cast<size_t>(w);
      continue;
    }
    if (w < 0 && errno == EINTR) continue;
    if (w < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
      IoStatus s = wait_fd(fd, POLLOUT, deadline);
      if (s != IoStatus::ok) return s;
      continue;
    }
    return (errno == EPIPE || errno == ECONNRESET) ? IoStatus::closed : IoStatus::error;
  }
  return IoStatus::ok;
}

IoStatus read_fully(int fd, char* p, size_t n, Clock::time_point deadline) {
  while (n > 0) {
    ssize_t r = ::recv(fd, p, n, MSG_DONTWAIT);
    if (r > 0) {
      p += r;
      n -= static_cast<size_t>(r);
      continue;
    }
    if (r == 0) return IoStatus::closed;
    if (errno == EINTR) continue;
    if (errno == EAGAIN || errno == EWOULDBLOCK) {
      IoStatus s = wait_fd(fd, POLLIN, deadline);
      if (s != IoStatus::ok) return s;
      continue;
    }
    return errno == ECONNRESET ? IoStatus::closed : IoStatus::error;
  }
  return IoStatus::ok;
}

}  // namespace

// Frame: u32 header length, u32 blob count, u64 blob lengths..., header, blobs.
IoStatus send_message(int fd, const nlohmann::json& header, const std::vector<std::string_view>& blobs,
                      Clock::time_point deadline) {
  std::string h = header.dump();
  std::string prefix(8 + 8 * blobs.size(), '\0');
  uint32_t hl = static_cast<uint32_t>(h.size()), bc = static_cast<uint32_t>(blobs.size());
  std::memcpy(&prefix[0], &hl, 4);
  std::memcpy(&prefix[4], &bc, 4);
  for (size_t i = 0; i < blobs.size(); ++i) {
    uint64_t bl = blobs[i].size();
    std::memcpy(&prefix[8 + 8 * i], &bl, 8);
  }
  IoStatus s = write_fully(fd, prefix.data(), prefix.size(), deadline);
  if (s == IoStatus::ok) s = write_fully(fd, h.data(), h.size(), deadline);
  for (size_t i = 0; s == IoStatus::ok && i < blobs.size(); ++i)
    s = write_fully(fd, blobs[i].data(), blobs[i].size(), deadline);
  return s;
}

IoStatus recv_message(int fd, Message& out, Clock::time_point deadline, uint64_t max_bytes) {
  char fixed[8];
  IoStatus s = read_fully(fd, fixed, 8, deadline);
  if (s != IoStatus::ok) return s;
  uint32_t hl, bc;
  std::memcpy(&hl, fixed, 4);
  std::memcpy(&bc, fixed + 4, 4);
  if (bc > 4096 || hl > max_bytes) return IoStatus::error;
  std::vector<uint64_t> lens(bc);
  s = read_fully(fd, reinterpret_cast<char*>(lens.data()), 8 * bc, deadline);
  if (s != IoStatus::ok) return s;
  uint64_t total = hl;
  for (uint64_t l : lens) total += l;
  if (total > max_bytes) return IoStatus::error;
  std::string h(hl, '\0');
  s = read_fully(fd, h.data(), hl, deadline);
  if (s != IoStatus::ok) return s;
  out.header = nlohmann::json::parse(h, nullptr, false);
  if (out.header.is_discarded()) return IoStatus::error;
  out.blobs.assign(bc, std::string());
  for (uint32_t i = 0; i < bc; ++i) {
    out.blobs[i].resize(lens[i]);
    s = read_fully(fd, out.blobs[i].data(), lens[i], deadline);
    if (s != IoStatus::ok) return s;
  }
  return IoStatus::ok;
}

bool send_packet(int fd, std::string_view data, const std::vector<int>& fds) {
  iovec iov{const_cast<char*>(data.data()), data.size()};
  msghdr msg{};
  msg.msg_iov = &iov;
  msg.msg_iovlen = 1;
  alignas(cmsghdr) char control[CMSG_SPACE(sizeof(int) * 64)];
  if (!fds.empty()) {
    if (fds.size() > 64) return false;
    msg.msg_control = control;
    msg.msg_controllen = CMSG_SPACE(sizeof(int) * fds.size());
    cmsghdr* c = CMSG_FIRSTHDR(&msg);
    c->cmsg_level = SOL_SOCKET;
    c->cmsg_type = SCM_RIGHTS;
    c->cmsg_len = CMSG_LEN(sizeof(int) * fds.size());
    std::memcpy(CMSG_DATA(c), fds.data(), sizeof(int) * fds.size());
  }
  for (;;) {
    ssize_t n = ::sendmsg(fd, &msg, MSG_NOSIGNAL);
    if (n >= 0) return static_cast<size_t>(n) == data.size();
    if (errno != EINTR) return false;
  }
}

IoStatus recv_packet(int fd, std::string& data, std::vector<UniqueFd>* fds, Clock::time_point deadline) {
  IoStatus s = wait_fd(fd, POLLIN, deadline);
  if (s != IoStatus::ok) return s;
  // Into an uninitialised stack buffer, not a zero-filled 64 KiB string: in
  // a freshly forked sandbox process every page written is a page fault
  // (a copy-on-write one in the executor), and packets are small.
  char buf[1 << 16];
  iovec iov{buf, sizeof buf};
  msghdr msg{};
  msg.msg_iov = &iov;
  msg.msg_iovlen = 1;
  alignas(cmsghdr) char control[CMSG_SPACE(sizeof(int) * 64)];
  msg.msg_control = control;
  msg.msg_controllen = sizeof control;
  ssize_t n;
  do {
    n = ::recvmsg(fd, &msg, MSG_CMSG_CLOEXEC | MSG_DONTWAIT);
  } while (n < 0 && errno == EINTR);
  if (n < 0) return (errno == EAGAIN) ? IoStatus::timeout : IoStatus::error;
  if (n == 0) return IoStatus::closed;
  data.assign(buf, static_cast<size_t>(n));
  for (cmsghdr* c = CMSG_FIRSTHDR(&msg); c; c = CMSG_NXTHDR(&msg, c)) {
    if (c->cmsg_level != SOL_SOCKET || c->cmsg_type != SCM_RIGHTS) continue;
    size_t count = (c->cmsg_len - CMSG_LEN(0)) / sizeof(int);
    int* p = reinterpret_cast<int*>(CMSG_DATA(c));
    for (size_t i = 0; i < count; ++i) {
      if (fds)
        fds->emplace_back(p[i]);
      else
        ::close(p[i]);
    }
  }
  if (msg.msg_flags & MSG_TRUNC) return IoStatus::error;
  return IoStatus::ok;
}

bool write_all(int fd, std::string_view data) {
  const char* p = data.data();
  size_t n = data.size();
  while (n > 0) {
    ssize_t w = ::write(fd, p, n);
    if (w < 0 && errno == EINTR) continue;
    if (w <= 0) return false;
    p += w;
    n -= static_cast<size_t>(w);
  }
  return true;
}

bool read_all_fd(int fd, std::string& out, uint64_t max_bytes) {
  out.clear();
  char buf[65536];
  for (;;) {
    ssize_t r = ::read(fd, buf, sizeof buf);
    if (r < 0 && errno == EINTR) continue;
    if (r < 0) return false;
    if (r == 0) return true;
    if (out.size() + static_cast<uint64_t>(r) > max_bytes) return false;
    out.append(buf, static_cast<size_t>(r));
  }
}

}  // namespace rlwb::sandbox::detail
