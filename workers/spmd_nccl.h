// NCCL backend for CUDA collectives, kept in its own translation unit so
// that only it sees NCCL's and CUDA's headers.
#pragma once

#include <torch/csrc/distributed/c10d/Backend.hpp>
#include <torch/csrc/distributed/c10d/Store.hpp>

#include <chrono>

namespace rlwb::workers {

c10::intrusive_ptr<c10d::Backend> make_nccl_backend(const c10::intrusive_ptr<c10d::Store>& store, int rank,
                                                    int world, std::chrono::milliseconds timeout);

}  // namespace rlwb::workers
