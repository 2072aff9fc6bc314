#include "workers/spmd_nccl.h"

#include <torch/csrc/distributed/c10d/PrefixStore.hpp>
#include <torch/csrc/distributed/c10d/ProcessGroupNCCL.hpp>

namespace rlwb::workers {

c10::intrusive_ptr<c10d::Backend> make_nccl_backend(const c10::intrusive_ptr<c10d::Store>& store, int rank,
                                                    int world, std::chrono::milliseconds timeout) {
  auto options = c10d::ProcessGroupNCCL::Options::create();
  options->timeout = timeout;
  // A prefix keeps NCCL's rendezvous keys apart from Gloo's on the same store.
  auto prefixed = c10::make_intrusive<c10d::PrefixStore>("nccl", store);
  return c10::make_intrusive<c10d::ProcessGroupNCCL>(prefixed, rank, world, options);
}

bool program_links_cuda() { return true; }

}  // namespace rlwb::workers
