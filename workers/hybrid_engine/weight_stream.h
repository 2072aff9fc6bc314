// WeightStreamer: generation on a pool of its own (not colocated with
// training), as verl runs its rollout workers apart: after each update the
// training ranks stream the actor's weights to the generation ranks, in
// buckets of a configurable size, over c10d broadcasts. The 3D-HybridEngine
// (hybrid_engine.h) is the colocated alternative; bench_reshard measures
// both.
//
// One c10d group holds both sides: ranks [0, t) are the training
// tensor-parallel ranks of one replica (rank s holds shard s of t, as
// Transformer::shard_tensor_parallel cuts it), ranks [t, world) the
// generation ranks, each holding a whole model of the same config. For
// each sender s a sub-group {s} + the generation ranks carries s's part of
// every parameter (parameters every tp rank holds whole: sender 0 only),
// packed in order into buckets of options.bucket_bytes; a tensor may span
// buckets. Senders go one after another; within a sender, one broadcast
// per bucket.
//
//   WeightStreamer stream(net, group, /*training_ranks=*/2, {.bucket_bytes = 32 << 20});
//   ... an optimizer step on the training ranks ...
//   stream.stream();   // collective over the group; generation ranks now hold the new weights
//
// With options.only_changed, the tensors whose version counter has not
// moved since the last stream on sender 0 (frozen ones: an embedding kept
// fixed, a LoRA base) are skipped; a one-byte-per-tensor header, broadcast
// first, tells every rank which go. The first stream sends everything.
//
// Buckets are host memory and travel over Gloo whatever the parameters'
// device: a side on a GPU copies each segment out of or into its
// parameters (so a CPU actor may feed a GPU rollout, and GPUs shared
// between the pools are no matter).
//
// Per stream, bytes received by each generation rank: the whole model M
// (or the changed part of it); sent by training rank s: its shard's part
// (M/t, plus the replicated tensors on rank 0) once per broadcast -- Gloo
// sends to each receiver. Transient memory: one bucket on each rank and
// one tensor's part on each generation rank.
#pragma once

#include <torch/types.h>

#include <memory>
#include <string>
#include <vector>

#include "workers/model/transformer.h"

namespace rlwb::workers {
class SpmdGroup;
}

namespace rlwb::workers::hybrid_engine {

struct WeightStreamOptions {
  int64_t bucket_bytes = int64_t{32} << 20;
  bool only_changed = false;
};

struct StreamStats {
  int64_t tensors = 0;         // parameters streamed (the rest unchanged)
  int64_t buckets = 0;         // broadcasts of data, over all senders
  int64_t bytes_received = 0;  // by this rank (0 on a training rank)
  int64_t bytes_sent = 0;      // by this rank, counted once per broadcast (0 on a generation rank)
};

class WeightStreamer {
 public:
  // Collective over `group` (it makes the senders' sub-groups; `name`
  // keeps them apart from others on the same store). On a training rank
  // `model` is its tensor-parallel shard (or the whole model at t = 1); on
  // a generation rank a whole model of the same config. Parameters of one
  // dtype. Throws std::invalid_argument when training_ranks is not in
  // [1, world) or the model's tensor parallelism disagrees with it.
  WeightStreamer(model::Transformer model, SpmdGroup& group, int training_ranks, const std::string& name,
                 WeightStreamOptions options = {});
  ~WeightStreamer();
  WeightStreamer(const WeightStreamer&) = delete;
  WeightStreamer& operator=(const WeightStreamer&) = delete;

  bool generating_rank() const;
  // Collective over the group.
  StreamStats stream();
  // The same rank's model replaced by another of the same parameters (a
  // checkpoint loaded into a new network): streams read it from now on, and
  // the next one sends everything (the new tensors' version counters say
  // nothing of the old ones'). Local; throws std::invalid_argument, as the
  // constructor does, and when the parameters' names or shapes differ.
  void rebind(model::Transformer model);

 private:
  struct Part;
  void bind();
  std::vector<int64_t> changed_tensors();
  void stream_sender(int sender, const std::vector<int64_t>& tensors, StreamStats& stats);

  model::Transformer model_;
  SpmdGroup& group_;
  int training_ranks_;
  WeightStreamOptions options_;
  std::vector<std::string> names_;
  std::vector<torch::Tensor> params_;
  std::vector<int64_t> versions_;                 // at the last stream; -1 before the first
  std::unique_ptr<SpmdGroup> own_sub_;            // a training rank: {itself} + generation ranks
  std::vector<std::unique_ptr<SpmdGroup>> from_;  // a generation rank: one per sender
};

}  // namespace rlwb::workers::hybrid_engine
