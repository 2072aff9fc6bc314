// rlwb-worker: one process of a resource pool. Started by a launcher
// (core/launch), never by hand in normal use:
//   rlwb-worker --controller ADDR --group POOL --rank R --world W
//               [--device cpu|cuda] [--store HOST:PORT [--join-store]] [--shm-threshold BYTES]
// (`rlwb-worker --help` lists them with their defaults).
#include <malloc.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>

#include <string>

#include "core/common/command_line.h"
#include "core/common/scheduler_slice.h"
#include "app/worker_roles.h"
#include "workers/spmd_nccl.h"
#include "workers/worker_server.h"

namespace {

// glibc hands every block over 128 KiB back to the kernel when it is freed
// and trims the heap top above 128 KiB, so each training step pays page
// faults (and kernel page clearing) again for the same activations: about
// 2,300 faults, 10-25% of a step of the default experiment's actor. A
// worker reuses the same sizes step after step, so it keeps freed memory:
// blocks up to 64 MiB come from the heap, and up to 256 MiB of free heap
// is kept. Larger tensors (big models' weights) are still mapped.
void keep_freed_memory_for_reuse() {
  mallopt(M_MMAP_THRESHOLD, 64 << 20);
  mallopt(M_TRIM_THRESHOLD, 256 << 20);
}

// "HOST:PORT" into the SPMD store's address, or why it is not one.
std::string parse_store(const std::string& text, rlwb::workers::SpmdOptions& spmd) {
  const auto colon = text.rfind(':');
  if (colon == std::string::npos || colon == 0) return "expects HOST:PORT, got '" + text + "'";
  try {
    size_t used = 0;
    const int port = std::stoi(text.substr(colon + 1), &used);
    if (used != text.size() - colon - 1 || port < 0 || port > 65535) throw std::out_of_range(text);
    spmd.store_host = text.substr(0, colon);
    spmd.store_port = port;
    return "";
  } catch (const std::exception&) {
    return "expects HOST:PORT with a port in 0..65535, got '" + text + "'";
  }
}

// A rank of a cuda pool runs in rlwb-worker-cuda, this program linked with
// LibTorch's CUDA libraries (app/CMakeLists.txt): rlwb-worker, which starts
// without them, replaces itself with it, same arguments, same process (the
// launcher's pid, signals and parent-death setting stay). Returns only on
// failure, with the exit status.
int run_as_cuda_worker(char** argv) {
  std::error_code ec;
  const auto self = std::filesystem::read_symlink("/proc/self/exe", ec);
  const auto cuda_worker = self.parent_path() / "rlwb-worker-cuda";
  execv(cuda_worker.c_str(), argv);
  std::fprintf(stderr,
               "rlwb-worker: --device cuda runs in %s, which could not be started (%s); build the target "
               "rlwb-worker-cuda beside rlwb-worker\n",
               cuda_worker.c_str(), std::strerror(errno));
  return 1;
}

}  // namespace

int main(int argc, char** argv) {
  keep_freed_memory_for_reuse();
  // Before any thread starts (ZeroMQ's, gloo's, torch's): they inherit it;
  // kept across the exec of the CUDA worker.
  rlwb::core::request_short_scheduler_slice();
  rlwb::workers::WorkerOptions options;
  CLI::App app{
      "rlwb-worker: one process of a resource pool, started by a launcher "
      "(core/launch), not by hand",
      "rlwb-worker"};
  app.add_option("--controller", options.controller, "the controller's address to dial")->required();
  app.add_option("--group", options.group, "the resource pool")->capture_default_str();
  app.add_option("--rank", options.rank, "this process's rank in the pool")
      ->check(CLI::NonNegativeNumber)
      ->capture_default_str();
  app.add_option("--world", options.world, "processes in the pool")
      ->check(CLI::PositiveNumber)
      ->capture_default_str();
  app.add_option("--device", options.device, "cpu or cuda (cuda:N)")->capture_default_str();
  std::string store;
  app.add_option("--store", store, "the pool's process-group store (rank 0 serves it)")
      ->type_name("HOST:PORT");
  bool join_store = false;
  app.add_flag("--join-store", join_store,
               "the store is served already (by the controller): rank 0 joins it like the others");
  app.add_option("--shm-threshold", options.wire.shm_threshold_bytes,
                 "tensors of this many bytes or more travel through shared memory (0: never)")
      ->capture_default_str();
  if (auto exit_code = rlwb::core::parse_command_line(app, argc, argv)) return *exit_code;
  if (options.rank >= options.world)
    return rlwb::core::report_usage_error(app, "--rank must be in [0, --world)");
  if (!store.empty())
    if (std::string problem = parse_store(store, options.spmd); !problem.empty())
      return rlwb::core::report_usage_error(app, "--store " + problem);
  options.spmd.serve_store = !join_store;
  if (options.device.rfind("cuda", 0) == 0 && !rlwb::workers::program_links_cuda())
    return run_as_cuda_worker(argv);
  return rlwb::workers::run_worker(options, rlwb::app::worker_roles());
}
