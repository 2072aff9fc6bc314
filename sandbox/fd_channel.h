// Messages between the sandbox's processes over Unix sockets:
//   - framed messages (a JSON header plus raw blobs) over a stream socket,
//     between an executor's owner and the executor process;
//   - small datagrams with attached descriptors (SCM_RIGHTS) over a
//     SOCK_SEQPACKET pair, between an executor and a sandbox's init.
// Every receive takes a deadline; nothing here blocks forever unless the
// caller passes an infinite one (an idle executor waiting for work).
// Also a few RAII and time helpers those processes share. Internal.
#pragma once

#include <chrono>
#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace rlwb::sandbox::detail {

using Clock = std::chrono::steady_clock;
inline constexpr Clock::time_point kNoDeadline = Clock::time_point::max();

// Milliseconds left until `deadline` as a poll() timeout (-1 for none).
int poll_timeout_ms(Clock::time_point deadline);

class UniqueFd {
 public:
  UniqueFd() = default;
  explicit UniqueFd(int fd) : fd_(fd) {}
  UniqueFd(UniqueFd&& o) noexcept : fd_(o.release()) {}
  UniqueFd& operator=(UniqueFd&& o) noexcept {
    if (this != &o) reset(o.release());
    return *this;
  }
  ~UniqueFd() { reset(); }
  int get() const { return fd_; }
  int release() {
    int f = fd_;
    fd_ = -1;
    return f;
  }
  void reset(int fd = -1);
  explicit operator bool() const { return fd_ >= 0; }

 private:
  int fd_ = -1;
};

struct Message {
  nlohmann::json header;
  std::vector<std::string> blobs;
};

enum class IoStatus { ok, closed, timeout, error };

// Framed stream messages. The sender blocks (bounded by `deadline`) while
// the peer is slow to read.
IoStatus send_message(int fd, const nlohmann::json& header, const std::vector<std::string_view>& blobs,
                      Clock::time_point deadline);
IoStatus recv_message(int fd, Message& out, Clock::time_point deadline, uint64_t max_bytes);

// SEQPACKET datagrams with descriptors (at most 64 per datagram).
bool send_packet(int fd, std::string_view data, const std::vector<int>& fds = {});
// Returns closed / timeout / ok; received descriptors are close-on-exec.
IoStatus recv_packet(int fd, std::string& data, std::vector<UniqueFd>* fds, Clock::time_point deadline);

// Whole-file helpers on descriptors (memfds): write all / read all (bounded).
bool write_all(int fd, std::string_view data);
bool read_all_fd(int fd, std::string& out, uint64_t max_bytes);

}  // namespace rlwb::sandbox::detail
