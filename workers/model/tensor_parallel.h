// Tensor parallelism as Megatron-LM does it, over the c10d group of a
// model's tensor-parallel ranks (workers/spmd_group.h, core::Mesh):
//
//   column-parallel  y_r = x W_r^T        W split by output rows (wq, wk, wv by
//                                         heads, ffn_gate and ffn_up by width)
//   row-parallel     y = sum_r x_r W_r^T  W split by input columns (wo,
//                                         ffn_down); one all-reduce, then the bias
//   vocab-parallel   embedding rows and LM-head rows split by token id
//
// Two operators carry the gradients (Megatron's f and g):
//   copy_to_tensor_parallel      forward x,              backward all-reduce
//   reduce_from_tensor_parallel  forward all-reduce,     backward identity
// The first goes in front of every column-parallel product (each rank's
// part of the input's gradient is summed), the second after every
// row-parallel one. Everything between them is replicated on the tp ranks
// of a data-parallel group: the same rows, the same residual stream, the
// same loss -- so replicated parameters (norms, biases of row-parallel
// layers, a value head) get the same, whole gradient on every tp rank.
#pragma once

#include <torch/types.h>

#include <string>

namespace rlwb::workers {
class SpmdGroup;
}

namespace rlwb::workers::model {

// Where this rank sits among the tensor-parallel ranks of its model.
struct TensorParallel {
  SpmdGroup* group = nullptr;  // the tp ranks; null with one rank. Outlives the model.
  int rank = 0, size = 1;
  bool active() const { return size > 1; }
};

// Rank `rank`'s contiguous part [start, start + size) of `total` items
// split over `parts` ranks; the first total % parts ranks get one more
// (a vocabulary that does not divide by tp is split unevenly, not padded).
struct Shard {
  int64_t start = 0, size = 0;
};
Shard shard_of(int64_t total, int rank, int parts);

// Megatron's f and g (above). Without autograd, reduce sums x in place
// and returns it (x is a fresh product there); with one rank both return x.
torch::Tensor copy_to_tensor_parallel(const torch::Tensor& x, const TensorParallel& tp);
torch::Tensor reduce_from_tensor_parallel(const torch::Tensor& x, const TensorParallel& tp);

// The whole tensor from every rank's shard_of() part along `dim` (parts of
// unequal size travel padded); collective over the tp ranks; no autograd.
torch::Tensor gather_shards(const torch::Tensor& local, int64_t dim, int64_t total, const TensorParallel& tp);

// How a parameter of the Transformer (RLWB's names, transformer.h) is
// split: along dimension 0 or 1, or -1 when every tp rank holds all of it.
int64_t tensor_parallel_dim(const std::string& parameter_name);

// The embedding and the language-model head: split by token id, over the
// tp ranks and, with pipeline stages, over the stages too
// (pipeline_parallel.h).
bool is_vocab_parameter(const std::string& parameter_name);

}  // namespace rlwb::workers::model
