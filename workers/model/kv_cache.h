// KVCache: the keys and values of every layer for a batch being generated,
// allocated once for the whole generation (prompt + new tokens) so a
// decoding step only writes one position per layer. Used by generate()
// (generation.h) through Transformer::hidden_states().
//
// Storage per layer: [B, Hkv, capacity, D], allocated when the layer first
// appends (a pipeline stage holds its own layers' only); positions
// [0, length()) are filled. All rows share the same length: ragged prompts are left-padded,
// and the padding is masked, not skipped.
//
// A growing cache (the constructor without a capacity) has no storage of
// its own: each append concatenates, so the keys and values keep their
// autograd history and a second chunk can be trained through the first.
// Scoring rows that share a prompt uses it (sequence_scores.cpp): the
// prompt is run once, its cache copied to every row that shares it.
#pragma once

#include <torch/types.h>

#include <utility>
#include <vector>

#include "workers/model/transformer_config.h"

namespace rlwb::workers::model {

class KVCache {
 public:
  KVCache(const TransformerConfig& config, int64_t batch, int64_t capacity, torch::TensorOptions options);
  // A growing cache (see above).
  KVCache(const TransformerConfig& config, int64_t batch);

  int64_t batch() const { return batch_; }
  int64_t capacity() const { return capacity_; }
  int64_t length() const { return length_; }

  // Stores k and v ([B, Hkv, T, D]) of `layer` at positions [length, length+T)
  // and returns views of positions [0, length+T). Throws ModelError when
  // length+T exceeds the capacity.
  std::pair<torch::Tensor, torch::Tensor> append(int64_t layer, const torch::Tensor& k,
                                                 const torch::Tensor& v);

  // Called once every layer has appended T positions.
  void advance(int64_t t) { length_ += t; }

  // Keeps only the given rows (finished rows dropped), so later steps
  // compute on fewer rows; an index may repeat (a row copied). rows: int64
  // indices into the current batch.
  void keep_rows(const torch::Tensor& rows);

  bool growing() const { return growing_; }
  // A growing cache's rows [start, start + size), as a growing cache of
  // their own (views of these rows until it appends), and the parts made
  // so -- in row order, each after the same appends -- joined back into
  // this one. Pipeline micro-batches run their rows against these
  // (pipeline_parallel.h). Throw ModelError on a cache with a capacity.
  KVCache rows(int64_t start, int64_t size) const;
  void join_rows(const std::vector<KVCache>& parts);

 private:
  int64_t batch_;
  int64_t capacity_;
  int64_t length_ = 0;
  bool growing_ = false;
  int64_t kv_heads_ = 0, head_dim_ = 0;
  torch::TensorOptions options_;
  std::vector<torch::Tensor> keys_;
  std::vector<torch::Tensor> values_;
};

}  // namespace rlwb::workers::model
