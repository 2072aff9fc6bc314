// HybridEngine: HybridFlow's 3D-HybridEngine (section 5) for one model on
// one rank. The model trains tensor-parallel at the layout's t and
// generates at t_g (hybrid_layout.h): the switch to generation is one
// all-gather inside each micro-DP group (a c10d sub-group of the pool), the
// switch back gives the gathered memory back, and the training shard never
// moves and is never held twice.
//
//   HybridEngine engine(actor, pool, HybridLayout({.tp = 2}, {.tp = 1}), "actor");
//   ... train `actor` (its split parameters now live in the engine's buffers)
//   engine.to_generation();                  // collective over the micro-DP group
//   engine.generation_model().generate(...)  // collective over the generation TP and PP groups
//   engine.to_training();                    // local; frees the gathered parts
//
// Memory: each split parameter (tensor_parallel_dim >= 0) moves once, at
// construction, into a GenerationBuffer (generation_buffer.h): the training
// parameter becomes a view of the buffer's own slot, and the gather fills
// the other d_g - 1 slots around it. Per rank, parameter memory is M/(t p)
// while training and M/(t_g p_g) while generating, plus the replicated
// parameters (norms, row-parallel biases), which every layout holds whole.
// On the CPU the own slot never moves (a mapped buffer); on a GPU
// (allocated buffers) each switch moves it into the gathered shard and
// back, one parameter at a time, and the training parameter follows it
// (set_data: the same parameter object, so an optimizer holding it steps
// the moved weights; its data_ptr changes).
// Bytes received per switch: (d_g - 1)/d_g of M/(t_g p_g) = (tp - t_g p_g)/(t_g p_g tp) M.
//
// The gather goes in pieces of options.piece_bytes of each rank's shard:
// c10d's Gloo all-gather stages a piece through buffers of its gathered
// size (d_g pieces, twice: Gloo's and the result list), so the piece size
// bounds the transient memory above M/(t_g p_g). (NCCL's
// all_gather_into_tensor writes in place; SpmdGroup does not offer it yet.)
//
// The generation model (generation_layout_model.h) reads the gathered
// buffers as they are; it is valid between to_generation() and
// to_training(). While generating, the training model must not be stepped.
//
// Pipeline stages: a model trained at p stages generates at p_g (dividing
// p; num_layers divisible by p when p_g < p). A micro-DP group then spans
// p/p_g consecutive training stages: a block's buffer has a slot per
// member, the member's block at the same position of its stage, so the
// one all-gather brings the generation stage's layers; the embedding's
// and the head's rows, split over the replica's p t ranks in the order
// mesh_groups.h's vocab_index gives for this layout, come back to back as
// the generation share; the norms and row-parallel biases of the blocks
// from the other stages come as t/t_g copies each (vectors of the hidden
// size). The generation model
// then runs p_g stages over the generation PP group. For generation on a
// pool of its own, weight_stream.h streams the weights there instead.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "workers/hybrid_engine/generation_buffer.h"
#include "workers/hybrid_engine/generation_layout_model.h"
#include "workers/hybrid_engine/hybrid_layout.h"
#include "workers/model/transformer.h"

namespace rlwb::workers {
class SpmdGroup;
}

namespace rlwb::workers::hybrid_engine {

struct HybridEngineOptions {
  int64_t piece_bytes = int64_t{1} << 20;  // of one rank's shard per all-gather
  // How the buffers hold the slots (generation_buffer.h); by default
  // mapped on the CPU, allocated on a GPU.
  std::optional<BufferBacking> backing;
};

class HybridEngine {
 public:
  // Collective over `pool` (every rank, the same layout and name; the name
  // keeps two engines' sub-groups apart). `model` is this rank's training
  // shard: shard_tensor_parallel() done with the training TP group (or
  // none when t = 1) and shard_pipeline_parallel() with the training PP
  // group (none when p = 1), parameters float32 on one device (the CPU,
  // or this rank's GPU with the pool's collectives over NCCL). Throws
  // HybridLayoutError when the pool, the model's tensor or pipeline
  // parallelism or the layout disagree (its vocabulary share too: make the
  // mesh groups with layout.generation_mesh()), when p_g < p and the layers
  // do not divide by p, or when the training p t does not divide the
  // vocabulary (the engine needs equal shards; pad the vocabulary).
  HybridEngine(model::Transformer model, SpmdGroup& pool, const HybridLayout& layout, const std::string& name,
               HybridEngineOptions options = {});
  ~HybridEngine();
  HybridEngine(const HybridEngine&) = delete;
  HybridEngine& operator=(const HybridEngine&) = delete;

  const HybridLayout& layout() const { return layout_; }
  bool generating() const { return generation_.has_value(); }

  // Training -> generation: every split parameter gathered within the
  // micro-DP group. Collective over it. Does nothing when generating.
  void to_generation();
  // Generation -> training: the generation model is dropped and the other
  // slots' memory given back. Local. Does nothing when training.
  void to_training();

  // Throws std::logic_error when not generating.
  GenerationLayoutModel& generation_model();

  // Parameter bytes this rank holds now: the buffers' resident pages
  // (mincore) plus the replicated parameters.
  int64_t resident_parameter_bytes() const;
  // Bytes this rank received in the last to_generation().
  int64_t bytes_received() const { return bytes_received_; }

  // The split parameters' storage, by name (for tests and accounting).
  const GenerationBuffer& buffer_of(const std::string& parameter_name) const;

 private:
  // A parameter whose generation shard is more than its training shard:
  // split over tp (dim >= 0), or a block's parameter gathered from other
  // stages (stage_parts = p/p_g > 1; then also one replicated over tp,
  // dim < 0, whose every tp slot holds the same copy).
  struct SplitParameter {
    std::string name;
    torch::Tensor parameter;
    int64_t dim;
    int64_t stage_parts;  // the training stages its buffer holds parts of: p/p_g for a block, else 1
    SpmdGroup* group;     // gathers its slots; null when it has one
    GenerationBuffer buffer;
  };
  GenerationWeights gathered_weights() const;
  // The training parameter views its buffer's own slot again (after an
  // allocated buffer moved it).
  static void view_own_slot(SplitParameter& s);
  void release_gathered_slots();

  model::Transformer model_;
  HybridLayout layout_;
  HybridPlacement placement_;
  HybridEngineOptions options_;
  std::unique_ptr<SpmdGroup> micro_dp_;       // null when d_g = 1
  std::unique_ptr<SpmdGroup> generation_tp_;  // null when t_g = 1
  std::unique_ptr<SpmdGroup> generation_pp_;  // null when p_g = 1
  // The generation replica's p_g t_g ranks (its vocabulary); null when p_g = 1.
  std::unique_ptr<SpmdGroup> generation_vocab_;
  std::vector<SplitParameter> split_;
  std::vector<torch::Tensor> replicated_;
  std::optional<GenerationLayoutModel> generation_;
  int64_t bytes_received_ = 0;
};

}  // namespace rlwb::workers::hybrid_engine
