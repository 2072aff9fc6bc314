// rlwb-worker: one process of a resource pool. Started by a launcher
// (core/launch), never by hand in normal use:
//   rlwb-worker --controller ADDR --group POOL --rank R --world W
//               [--device cpu|cuda] [--store HOST:PORT] [--shm-threshold BYTES]
#include "workers/method_registry.h"
#include "workers/worker_server.h"

#include <malloc.h>

#include <cstdlib>
#include <cstring>
#include <iostream>
#include <string>

namespace {

void usage_error(const std::string& message) {
  std::cerr << "rlwb-worker: " << message
            << "\nusage: rlwb-worker --controller ADDR --group POOL --rank R --world W "
               "[--device cpu|cuda] [--store HOST:PORT] [--shm-threshold BYTES]\n";
  std::exit(2);
}

int to_int(const std::string& flag, const std::string& value) {
  try {
    size_t used = 0;
    int v = std::stoi(value, &used);
    if (used == value.size()) return v;
  } catch (...) {
  }
  usage_error(flag + " expects an integer, got '" + value + "'");
  return 0;
}

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

}  // namespace

int main(int argc, char** argv) {
  keep_freed_memory_for_reuse();
  rlwb::workers::WorkerOptions options;
  for (int i = 1; i < argc; ++i) {
    std::string flag = argv[i];
    if (i + 1 >= argc) usage_error("missing value after " + flag);
    std::string value = argv[++i];
    if (flag == "--controller") options.controller = value;
    else if (flag == "--group") options.group = value;
    else if (flag == "--rank") options.rank = to_int(flag, value);
    else if (flag == "--world") options.world = to_int(flag, value);
    else if (flag == "--device") options.device = value;
    else if (flag == "--shm-threshold") options.wire.shm_threshold_bytes = static_cast<size_t>(to_int(flag, value));
    else if (flag == "--store") {
      auto colon = value.rfind(':');
      if (colon == std::string::npos) usage_error("--store expects HOST:PORT, got '" + value + "'");
      options.spmd.store_host = value.substr(0, colon);
      options.spmd.store_port = to_int(flag, value.substr(colon + 1));
    } else usage_error("unknown option " + flag);
  }
  if (options.controller.empty()) usage_error("--controller is required");
  if (options.rank < 0 || options.rank >= options.world)
    usage_error("--rank must be in [0, --world)");
  return rlwb::workers::run_worker(options, rlwb::workers::builtin_roles());
}
