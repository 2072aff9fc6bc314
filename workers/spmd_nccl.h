// NCCL backend for CUDA collectives, kept in its own translation unit so
// that only it sees NCCL's and CUDA's headers. A program links either
// spmd_nccl.cpp (with LibTorch's CUDA libraries) or spmd_nccl_unbuilt.cpp,
// whose make_nccl_backend throws (workers/CMakeLists.txt).
#pragma once

#include <torch/csrc/distributed/c10d/Backend.hpp>
#include <torch/csrc/distributed/c10d/Store.hpp>

#include <chrono>

namespace rlwb::workers {

c10::intrusive_ptr<c10d::Backend> make_nccl_backend(const c10::intrusive_ptr<c10d::Store>& store, int rank,
                                                    int world, std::chrono::milliseconds timeout);

// Whether this program was linked with LibTorch's CUDA libraries (and so
// can run a model, a collective or the CUPTI collector on a GPU).
bool program_links_cuda();

}  // namespace rlwb::workers
