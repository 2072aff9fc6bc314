#include "workers/model/kv_cache.h"

#include <torch/torch.h>

#include <limits>

#include "workers/model/model_error.h"

namespace rlwb::workers::model {

KVCache::KVCache(const TransformerConfig& config, int64_t batch, int64_t capacity,
                 torch::TensorOptions options)
    : batch_(batch),
      capacity_(capacity),
      kv_heads_(config.num_kv_heads),
      head_dim_(config.resolved_head_dim()),
      options_(options),
      keys_(config.num_layers),
      values_(config.num_layers) {}

KVCache::KVCache(const TransformerConfig& config, int64_t batch)
    : batch_(batch),
      capacity_(std::numeric_limits<int64_t>::max()),
      growing_(true),
      keys_(config.num_layers),
      values_(config.num_layers) {}

std::pair<torch::Tensor, torch::Tensor> KVCache::append(int64_t layer, const torch::Tensor& k,
                                                        const torch::Tensor& v) {
  const int64_t t = k.size(2);
  if (length_ + t > capacity_) {
    throw ModelError("KV cache: " + std::to_string(length_ + t) + " positions exceed its capacity of " +
                     std::to_string(capacity_));
  }
  torch::Tensor& keys = keys_[layer];
  torch::Tensor& values = values_[layer];
  if (growing_) {
    keys = keys.defined() ? torch::cat({keys, k}, 2) : k;
    values = values.defined() ? torch::cat({values, v}, 2) : v;
    return {keys, values};
  }
  if (!keys.defined()) {  // a layer's storage comes with its first keys: a pipeline stage's others never do
    keys = torch::empty({batch_, kv_heads_, capacity_, head_dim_}, options_);
    values = torch::empty_like(keys);
  }
  keys.narrow(2, length_, t).copy_(k);
  values.narrow(2, length_, t).copy_(v);
  return {keys.narrow(2, 0, length_ + t), values.narrow(2, 0, length_ + t)};
}

void KVCache::keep_rows(const torch::Tensor& rows) {
  for (auto& k : keys_)
    if (k.defined()) k = k.index_select(0, rows);
  for (auto& v : values_)
    if (v.defined()) v = v.index_select(0, rows);
  batch_ = rows.size(0);
}

KVCache KVCache::rows(int64_t start, int64_t size) const {
  if (!growing_) throw ModelError("KV cache: rows() of a cache with a capacity; only a growing cache splits");
  KVCache part = *this;
  part.batch_ = size;
  for (auto* tensors : {&part.keys_, &part.values_})
    for (auto& t : *tensors)
      if (t.defined()) t = t.narrow(0, start, size);
  return part;
}

void KVCache::join_rows(const std::vector<KVCache>& parts) {
  if (!growing_) throw ModelError("KV cache: join_rows() into a cache with a capacity");
  int64_t rows = 0;
  for (const KVCache& part : parts) rows += part.batch_;
  for (size_t layer = 0; layer < keys_.size(); ++layer) {
    std::vector<torch::Tensor> keys, values;
    for (const KVCache& part : parts)
      if (part.keys_[layer].defined()) {
        keys.push_back(part.keys_[layer]);
        values.push_back(part.values_[layer]);
      }
    if (keys.empty()) continue;  // another stage's layer
    keys_[layer] = torch::cat(keys);
    values_[layer] = torch::cat(values);
  }
  batch_ = rows;
}

}  // namespace rlwb::workers::model
