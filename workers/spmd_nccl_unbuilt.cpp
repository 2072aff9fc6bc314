// The NCCL backend's stand-in in programs linked without LibTorch's CUDA
// libraries (spmd_nccl.h): such a program never holds a CUDA tensor, since
// it cannot make one, so make_nccl_backend is reached only by a mistake in
// how a program was linked.
#include "workers/spmd_nccl.h"

#include <stdexcept>

namespace rlwb::workers {

c10::intrusive_ptr<c10d::Backend> make_nccl_backend(const c10::intrusive_ptr<c10d::Store>&, int, int,
                                                    std::chrono::milliseconds) {
  throw std::runtime_error(
      "NCCL collectives need LibTorch's CUDA libraries, and this program was linked without them "
      "(rlwb-worker runs a cuda pool's ranks as rlwb-worker-cuda)");
}

bool program_links_cuda() { return false; }

}  // namespace rlwb::workers
