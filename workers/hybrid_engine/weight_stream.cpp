#include "workers/hybrid_engine/weight_stream.h"

#include <torch/torch.h>

#include <algorithm>
#include <stdexcept>

#include "workers/model/tensor_parallel.h"
#include "workers/spmd_group.h"

namespace rlwb::workers::hybrid_engine {

WeightStreamer::WeightStreamer(model::Transformer model, SpmdGroup& group, int training_ranks,
                               const std::string& name, WeightStreamOptions options)
    : model_(std::move(model)), group_(group), training_ranks_(training_ranks), options_(options) {
  if (training_ranks < 1 || training_ranks >= group.world())
    throw std::invalid_argument("WeightStreamer: training_ranks = " + std::to_string(training_ranks) +
                                " must be in [1, " + std::to_string(group.world()) +
                                "): the group needs at least one generation rank");
  bind();
  std::vector<int> members(1);
  for (int r = training_ranks; r < group.world(); ++r) members.push_back(r);
  for (int sender = 0; sender < training_ranks; ++sender) {
    members[0] = sender;
    const std::string sub = name + "/stream/" + std::to_string(sender);
    if (group.rank() == sender) own_sub_ = group.subgroup(sub, members);
    if (generating_rank()) from_.push_back(group.subgroup(sub, members));
  }
}

// Reads the model's parameters (checked as the constructor promises);
// nothing streamed yet as far as only_changed goes.
void WeightStreamer::bind() {
  if (model_->pipeline_parallel().active())
    throw std::invalid_argument(
        "WeightStreamer: streams tensor-parallel shards only; the model has pipeline stages");
  const int expected_tp = generating_rank() ? 1 : training_ranks_;
  if (model_->tensor_parallel().size != expected_tp)
    throw std::invalid_argument("WeightStreamer: rank " + std::to_string(group_.rank()) + " holds a tp = " +
                                std::to_string(model_->tensor_parallel().size) + " shard but must hold " +
                                (generating_rank() ? std::string("the whole model")
                                                   : "shard " + std::to_string(group_.rank()) +
                                                         " of tp = " + std::to_string(training_ranks_)));
  std::vector<std::string> names;
  std::vector<torch::Tensor> params;
  for (auto& p : model_->named_parameters()) {
    names.push_back(p.key());
    params.push_back(p.value());
    if (p.value().scalar_type() != params.front().scalar_type())
      throw std::invalid_argument("WeightStreamer: every parameter must have one dtype; '" + p.key() +
                                  "' differs from '" + names.front() + "'");
  }
  if (!params_.empty()) {  // a rebind: the same tensors, shaped alike
    bool same = names == names_;
    for (size_t i = 0; same && i < params.size(); ++i) same = params[i].sizes() == params_[i].sizes();
    if (!same)
      throw std::invalid_argument(
          "WeightStreamer: the model rebound has other parameters than the one streamed so far");
  }
  names_ = std::move(names);
  params_ = std::move(params);
  versions_.assign(params_.size(), -1);
}

void WeightStreamer::rebind(model::Transformer model) {
  model_ = std::move(model);
  bind();
}

WeightStreamer::~WeightStreamer() = default;

bool WeightStreamer::generating_rank() const { return group_.rank() >= training_ranks_; }

std::vector<int64_t> WeightStreamer::changed_tensors() {
  const int64_t n = static_cast<int64_t>(params_.size());
  torch::Tensor flags = torch::ones({n}, torch::kUInt8);
  if (options_.only_changed) {
    if (group_.rank() == 0) {
      auto f = flags.accessor<uint8_t, 1>();
      for (int64_t i = 0; i < n; ++i) f[i] = versions_[i] != static_cast<int64_t>(params_[i]._version());
    }
    group_.broadcast(flags, 0);
  }
  std::vector<int64_t> changed;
  auto f = flags.accessor<uint8_t, 1>();
  for (int64_t i = 0; i < n; ++i)
    if (f[i]) changed.push_back(i);
  return changed;
}

// One tensor's part from one sender: the whole tensor (sender 0) or its
// tp shard, as a contiguous source (sender) or staging tensor (receiver).
struct WeightStreamer::Part {
  int64_t index = 0, numel = 0, dim = -1;
  model::Shard shard;
  torch::Tensor flat;  // sender: its data; receiver: staging, copied in when full
};

void WeightStreamer::stream_sender(int sender, const std::vector<int64_t>& tensors, StreamStats& stats) {
  const bool sending = group_.rank() == sender;
  if (!sending && !generating_rank()) return;  // another sender's turn
  SpmdGroup& sub = sending ? *own_sub_ : *from_[sender];
  std::vector<Part> parts;
  for (int64_t i : tensors) {
    const int64_t dim = training_ranks_ > 1 ? model::tensor_parallel_dim(names_[i]) : -1;
    if (dim < 0 && sender != 0) continue;  // held whole by every tp rank: sender 0 sends it
    Part part{i, 0, dim, {}, {}};
    if (sending) {
      part.numel = params_[i].numel();
    } else {
      const torch::Tensor& whole = params_[i];
      part.shard = dim < 0 ? model::Shard{0, whole.numel()}
                           : model::shard_of(whole.size(dim), sender, training_ranks_);
      part.numel = dim < 0 ? whole.numel() : whole.numel() / whole.size(dim) * part.shard.size;
    }
    parts.push_back(part);
  }
  const torch::ScalarType dtype = params_.front().scalar_type();
  const int64_t element = static_cast<int64_t>(c10::elementSize(dtype));
  const int64_t per_bucket = std::max<int64_t>(1, options_.bucket_bytes / element);
  int64_t total = 0;
  for (const Part& p : parts) total += p.numel;

  torch::NoGradGuard no_grad;
  struct Segment {  // n elements of parts[part] from its element `from`, in the bucket at `at`
    size_t part;
    int64_t from, n, at;
  };
  size_t part = 0;     // the first part not yet wholly streamed
  int64_t within = 0;  // elements of it already streamed
  for (int64_t done = 0; done < total;) {
    const int64_t size = std::min(per_bucket, total - done);
    // Both sides cut the parts into this bucket's segments alike.
    std::vector<Segment> segments;
    for (int64_t used = 0; used < size;) {
      const int64_t n = std::min(size - used, parts[part].numel - within);
      segments.push_back({part, within, n, used});
      used += n, within += n;
      if (within == parts[part].numel) ++part, within = 0;
    }
    torch::Tensor bucket = torch::empty({size}, torch::TensorOptions().dtype(dtype));
    for (const Segment& g : segments) {
      Part& p = parts[g.part];
      if (sending) {
        if (!p.flat.defined()) p.flat = params_[p.index].detach().contiguous().view({-1});
        bucket.narrow(0, g.at, g.n).copy_(p.flat.narrow(0, g.from, g.n));
      }
    }
    sub.broadcast(bucket, 0);
    ++stats.buckets;
    (sending ? stats.bytes_sent : stats.bytes_received) += size * element;
    for (const Segment& g : segments) {
      Part& p = parts[g.part];
      if (!sending) {
        if (!p.flat.defined()) p.flat = torch::empty({p.numel}, bucket.options());
        p.flat.narrow(0, g.from, g.n).copy_(bucket.narrow(0, g.at, g.n));
      }
      if (g.from + g.n < p.numel) continue;  // the part goes on in the next bucket
      if (!sending) {                        // whole now: into its slice of the parameter
        torch::Tensor& whole = params_[p.index];
        torch::Tensor target = p.dim < 0 ? whole : whole.narrow(p.dim, p.shard.start, p.shard.size);
        target.copy_(p.flat.view(target.sizes()));
      }
      p.flat = torch::Tensor();
    }
    done += size;
  }
}

StreamStats WeightStreamer::stream() {
  StreamStats stats;
  const std::vector<int64_t> tensors = changed_tensors();
  stats.tensors = static_cast<int64_t>(tensors.size());
  for (int sender = 0; sender < training_ranks_; ++sender) stream_sender(sender, tensors, stats);
  if (!generating_rank())
    for (int64_t i : tensors) versions_[i] = static_cast<int64_t>(params_[i]._version());
  return stats;
}

}  // namespace rlwb::workers::hybrid_engine
