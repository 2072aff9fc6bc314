// bench_transfer: how fast a Batch moves from the controller to a worker
// process on one host, next to its floor: memcpy of the same bytes.
//
// For each size (1, 16, 256 MiB; one int64 tensor column) and each path
//   shm    ipc://, tensor bytes in a shared-memory segment (WireOptions
//          shm_threshold_bytes = 1 MiB), ZeroMQ carries the descriptor
//   inline ipc://, tensor bytes as a ZeroMQ frame
//   inline tcp://127.0.0.1
// one timed transfer is: encode_message (for shm: the copy into the
// segment) -> send over a ROUTER socket -> the worker (a forked process,
// DEALER) receives, decode_message, reads the tensor, drops it -> sends an
// ack carrying a checksum -> the controller receives the ack. The checksum
// is checked against one computed locally, so a wrong byte fails the run.
// The worker reads the tensor in one of two ways, both printed:
//   touch  one 8-byte word per 4 KiB page (every page is mapped and present;
//          measures the transport)
//   read   every byte (the worker consumes all the data; adds a full read)
// The reference is a warm single-thread memcpy of the same bytes into a
// buffer already faulted in, timed right before every transfer so that both
// see the same machine load (the ratio is of the two medians). Times are
// medians over the timed repetitions, after warm-up transfers; the first
// shm transfer of each size (fresh segment: tmpfs page faults on both
// sides) is printed separately.
//
// Usage: bench_transfer [--quick]   (--quick: fewer repetitions)
#include <ATen/Parallel.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <iterator>
#include <string>
#include <vector>
#include <zmq_addon.hpp>

#include "bench/bench_record.h"
#include "core/common/command_line.h"
#include "core/wire/shm_segment.h"
#include "core/wire/wire.h"

namespace {

using rlwb::core::Batch;
using rlwb::core::Message;
using rlwb::core::WireOptions;
using Json = nlohmann::json;
using Clock = std::chrono::steady_clock;

constexpr size_t kMiB = size_t{1} << 20;
constexpr size_t kPage = 4096;

// [SECTION] what the worker does with the tensor

enum class Read { kTouch, kAll };

uint64_t checksum(const void* data, size_t bytes, Read how) {
  const auto* words = static_cast<const uint64_t*>(data);
  const size_t n = bytes / sizeof(uint64_t);
  uint64_t sum = 0;
  if (how == Read::kTouch) {
    for (size_t i = 0; i < n; i += kPage / sizeof(uint64_t)) sum += words[i];
  } else {
    for (size_t i = 0; i < n; ++i) sum += words[i];
  }
  return sum;
}

// [SECTION] the worker process

std::vector<zmq::message_t> receive(zmq::socket_t& s) {
  std::vector<zmq::message_t> frames;
  if (!zmq::recv_multipart(s, std::back_inserter(frames))) {
    std::fprintf(stderr, "bench_transfer: timed out waiting for a message\n");
    std::exit(2);
  }
  return frames;
}

void send(zmq::socket_t& s, const Json& header, const Batch& b, const WireOptions& options,
          zmq::message_t* identity = nullptr) {
  std::vector<zmq::message_t> frames;
  if (identity != nullptr) frames.emplace_back(identity->data(), identity->size());
  rlwb::core::encode_message(header, b, frames, options);
  zmq::send_multipart(s, frames);
}

int worker_main(const std::string& endpoint) {
  at::set_num_threads(1);
  zmq::context_t ctx;
  zmq::socket_t dealer(ctx, zmq::socket_type::dealer);
  dealer.set(zmq::sockopt::rcvtimeo, 120000);
  dealer.set(zmq::sockopt::linger, 0);
  dealer.connect(endpoint);
  send(dealer, {{"kind", "hello"}}, Batch(), {});
  for (;;) {
    uint64_t sum = 0;
    {
      std::vector<zmq::message_t> frames = receive(dealer);
      Message m = rlwb::core::decode_message(frames);
      if (m.header["kind"] == "stop") break;
      const torch::Tensor& t = m.batch.tensor("x");
      sum = checksum(t.data_ptr(), t.nbytes(), m.header["read"] == "all" ? Read::kAll : Read::kTouch);
    }  // the tensor (and its segment) is released before the ack
    send(dealer, {{"kind", "ack"}, {"sum", sum}}, Batch(), {});
  }
  return 0;
}

// [SECTION] the controller

struct Path {
  const char* name;
  std::string bind_to;
  WireOptions options;
};

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

// The memcpy reference: the same bytes into a buffer already faulted in.
class Memcpy {
 public:
  explicit Memcpy(size_t bytes) : dst_(bytes, 1) {}
  double seconds(const void* src) {
    const auto t0 = Clock::now();
    std::memcpy(dst_.data(), src, dst_.size());
    asm volatile("" : : "r"(dst_.data()) : "memory");
    const double s = std::chrono::duration<double>(Clock::now() - t0).count();
    all_.push_back(s);
    return s;
  }
  double median_all() const { return median(all_); }

 private:
  std::vector<char> dst_;
  std::vector<double> all_;
};

class Link {
 public:
  explicit Link(const Path& path) : router_(ctx_, zmq::socket_type::router), path_(path) {
    router_.set(zmq::sockopt::rcvtimeo, 120000);
    router_.set(zmq::sockopt::linger, 0);
    router_.bind(path.bind_to);
    endpoint_ = router_.get(zmq::sockopt::last_endpoint);
    std::fflush(nullptr);
    pid_ = fork();
    if (pid_ == 0) _exit(worker_main(endpoint_));
    std::vector<zmq::message_t> hello = receive(router_);
    worker_ = std::move(hello[0]);
  }
  ~Link() {
    send(router_, {{"kind", "stop"}}, Batch(), {}, &worker_);
    int status = 0;
    waitpid(pid_, &status, 0);
    if (endpoint_.rfind("ipc://", 0) == 0) std::remove(endpoint_.substr(6).c_str());
  }

  // One timed transfer; exits the program if the worker's checksum is wrong.
  double transfer(const Batch& b, Read how, uint64_t expected) {
    const auto t0 = Clock::now();
    send(router_, {{"kind", "data"}, {"read", how == Read::kAll ? "all" : "touch"}}, b, path_.options,
         &worker_);
    std::vector<zmq::message_t> ack = receive(router_);
    const auto t1 = Clock::now();
    Message m = rlwb::core::decode_message(ack, 1);
    if (m.header["sum"].get<uint64_t>() != expected) {
      std::fprintf(stderr, "bench_transfer: %s: worker checksum %llu, expected %llu\n", path_.name,
                   static_cast<unsigned long long>(m.header["sum"].get<uint64_t>()),
                   static_cast<unsigned long long>(expected));
      std::exit(3);
    }
    return std::chrono::duration<double>(t1 - t0).count();
  }

 private:
  zmq::context_t ctx_;
  zmq::socket_t router_;
  Path path_;
  std::string endpoint_;
  zmq::message_t worker_;
  pid_t pid_ = 0;
};

int repetitions(size_t bytes, bool quick) {
  int reps = bytes >= 256 * kMiB ? 10 : bytes >= 16 * kMiB ? 40 : 200;
  return quick ? std::max(3, reps / 4) : reps;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{
      "bench_transfer: tensor transfer between processes, shared memory and tcp next to "
      "their floors",
      "bench_transfer"};
  bool quick = false;
  app.add_flag("--quick", quick, "fewer repetitions");
  if (auto exit_code = rlwb::core::parse_command_line(app, argc, argv)) return *exit_code;
  const std::string ipc = "ipc:///tmp/rlwb-bench-transfer-" + std::to_string(getpid());
  const std::vector<Path> paths = {
      {"shm ipc", ipc + "-shm", WireOptions{kMiB}},
      {"inline ipc", ipc + "-inline", WireOptions{0}},
      {"inline tcp", "tcp://127.0.0.1:*", WireOptions{0}},
  };
  const std::vector<size_t> sizes = {1 * kMiB, 16 * kMiB, 256 * kMiB};

  // One worker process per path, forked before the controller does any work.
  std::vector<std::unique_ptr<Link>> links;
  for (const Path& p : paths) links.push_back(std::make_unique<Link>(p));

  std::printf("bench_transfer: Batch controller -> worker process, one host, one int64 column\n");
  std::printf("timed: encode (shm: + copy into segment) -> send -> worker decode + read -> ack\n");
  std::printf("read: touch = one word per 4 KiB page; all = every byte. GB/s = 1e9 bytes/s.\n");
  std::printf("reference: warm single-thread memcpy of the same bytes, timed before each transfer;\n");
  std::printf("x memcpy = median memcpy time / median transfer time. median of N runs.\n\n");
  std::printf("%-8s %-12s %-6s %5s %10s %8s %9s\n", "size", "path", "read", "N", "ms", "GB/s", "x memcpy");

  std::vector<std::string> notes;
  for (size_t bytes : sizes) {
    const int reps = repetitions(bytes, quick);
    const int64_t cols = 1024;
    const int64_t rows = static_cast<int64_t>(bytes / sizeof(int64_t)) / cols;
    Batch b;
    b.set_tensor("x", torch::arange(rows * cols, torch::kInt64).view({rows, cols}));
    const void* data = b.tensor("x").data_ptr();
    const double mb = static_cast<double>(bytes) / kMiB;
    Memcpy reference(bytes);
    for (int w = 0; w < 2; ++w) reference.seconds(data);
    std::vector<std::string> lines;
    for (Read how : {Read::kTouch, Read::kAll}) {
      const uint64_t expected = checksum(data, bytes, how);
      for (size_t i = 0; i < paths.size(); ++i) {
        const double first = links[i]->transfer(b, how, expected);
        for (int w = 0; w < 2; ++w) links[i]->transfer(b, how, expected);  // warm-up
        std::vector<double> copy, moved;
        for (int k = 0; k < reps; ++k) {
          copy.push_back(reference.seconds(data));
          moved.push_back(links[i]->transfer(b, how, expected));
        }
        const double med = median(moved);
        char line[160];
        std::snprintf(line, sizeof line, "%-8s %-12s %-6s %5d %10.3f %8.2f %9.2f\n", "", paths[i].name,
                      how == Read::kAll ? "all" : "touch", reps, med * 1e3, bytes / med / 1e9,
                      median(copy) / med);
        lines.emplace_back(line);
        if (how == Read::kTouch && i == 0 && bytes == 16 * kMiB) {
          std::vector<double> ratios;  // memcpy time / transfer time, each pair of the rounds
          for (int k = 0; k < reps; ++k) ratios.push_back(copy[k] / moved[k]);
          rlwb::bench::record_figure({.key = "transfer/16MiB_shm",
                                      .title = "batch transfer, 16 MiB via " + std::string(paths[i].name) +
                                               ", touch (`bench_transfer`)",
                                      .value = med * 1e3,
                                      .unit = "ms",
                                      .peer = "single-thread memcpy",
                                      .peer_value = median(copy) * 1e3,
                                      .pair_ratios = ratios,
                                      .goal = ">= 0.5x memcpy (median)",
                                      .met = median(copy) / med >= 0.5});
        }
        if (how == Read::kTouch && i == 0) {
          std::snprintf(line, sizeof line,
                        "first shm transfer of %.0f MiB (fresh segment, page faults): %.2f ms "
                        "(%.2f GB/s)",
                        mb, first * 1e3, bytes / first / 1e9);
          notes.emplace_back(line);
        }
      }
    }
    const double ref = reference.median_all();
    std::printf("%-8s %-12s %-6s %5d %10.3f %8.2f %9.2f\n", (std::to_string(bytes / kMiB) + " MiB").c_str(),
                "memcpy", "-", static_cast<int>(2 * paths.size()) * reps, ref * 1e3, bytes / ref / 1e9, 1.0);
    for (const auto& l : lines) std::printf("%s", l.c_str());
    rlwb::core::shm_trim();  // release this size's segments before the next
  }
  std::printf("\n");
  for (const auto& n : notes) std::printf("%s\n", n.c_str());
  const rlwb::core::ShmStats st = rlwb::core::shm_stats();
  std::printf("shm segments created %zu, reuses %zu (controller side)\n", st.sender_created,
              st.sender_reused);
  links.clear();
  return 0;
}
