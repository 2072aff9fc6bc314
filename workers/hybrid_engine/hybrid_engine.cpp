#include "workers/hybrid_engine/hybrid_engine.h"

#include <torch/torch.h>

#include <algorithm>
#include <map>
#include <stdexcept>

#include "workers/mesh_groups.h"
#include "workers/spmd_group.h"

namespace rlwb::workers::hybrid_engine {
namespace {

std::string group_name(const std::string& engine, const char* kind, const std::vector<int>& ranks) {
  std::string name = engine + "/" + kind;
  for (int r : ranks) name += "." + std::to_string(r);
  return name;
}

void check_fits(const model::TransformerImpl& m, const SpmdGroup& pool, const HybridLayout& layout,
                const HybridPlacement& at) {
  const std::string where = "HybridEngine: ";
  if (pool.world() != layout.world())
    throw HybridLayoutError(where + "the layout has " + std::to_string(layout.world()) +
                            " ranks (pp * tp * dp) but the pool has " + std::to_string(pool.world()) +
                            "; make dp * tp * pp equal the pool's ranks");
  const model::PipelineParallel& pp = m.pipeline_parallel();
  if (pp.stages != layout.train().pp || pp.stage != at.stage)
    throw HybridLayoutError(where + "the model is split as pipeline stage " + std::to_string(pp.stage) +
                            " of " + std::to_string(pp.stages) + " but the layout puts pool rank " +
                            std::to_string(pool.rank()) + " at stage " + std::to_string(at.stage) + " of " +
                            std::to_string(layout.train().pp) +
                            "; split it with the layout's training PP group (make_mesh_groups) first");
  const int64_t layers = m.config().num_layers;
  if (layout.generate().pp != layout.train().pp && layers % layout.train().pp != 0)
    throw HybridLayoutError(where + "'num_layers' = " + std::to_string(layers) +
                            " does not divide by pp = " + std::to_string(layout.train().pp) +
                            "; generating with fewer stages gathers equal runs of layers from the "
                            "stages: choose a pp that divides the layers, or generate with pp = " +
                            std::to_string(layout.train().pp));
  const model::TensorParallel& tp = m.tensor_parallel();
  if (tp.size != layout.train().tp || tp.rank != at.tp_index)
    throw HybridLayoutError(where + "the model is sharded as tp rank " + std::to_string(tp.rank) + " of " +
                            std::to_string(tp.size) + " but the layout puts pool rank " +
                            std::to_string(pool.rank()) + " at tp rank " + std::to_string(at.tp_index) +
                            " of " + std::to_string(layout.train().tp) +
                            "; shard it with the layout's training TP group (make_mesh_groups) first");
  const int vocab_parts = layout.train().pp * layout.train().tp;
  if (m.config().vocab_size % vocab_parts != 0)
    throw HybridLayoutError(where + "'vocab_size' = " + std::to_string(m.config().vocab_size) +
                            " does not divide by the training pp * tp = " + std::to_string(vocab_parts) +
                            "; the engine gathers equal shards: pad the vocabulary to a multiple of it");
  const int share = vocab_index(layout.generation_mesh(), pool.rank());
  if (m.vocab_parallel().size != vocab_parts || m.vocab_parallel().rank != share)
    throw HybridLayoutError(where + "the model holds vocabulary share " +
                            std::to_string(m.vocab_parallel().rank) + " of " +
                            std::to_string(m.vocab_parallel().size) +
                            " but generating in this layout needs " + std::to_string(share) + " of " +
                            std::to_string(vocab_parts) + " on pool rank " + std::to_string(pool.rank()) +
                            "; make the mesh groups with the generation mesh (make_mesh_groups(..., "
                            "layout.generation_mesh()))");
  if (m.config().head != model::Head::kLanguageModel)
    throw HybridLayoutError(where + "the model has a value head; only a language model generates");
  const torch::Device device = m.tok_embeddings->weight.device();
  for (const auto& p : m.parameters())
    if (p.scalar_type() != torch::kFloat32 || p.device() != device)
      throw HybridLayoutError(where +
                              "parameters must be float32 on one device (the buffers hold float32 "
                              "shards); cast the model with ->to(" +
                              device.str() + ", torch::kFloat32)");
}

}  // namespace

HybridEngine::HybridEngine(model::Transformer model, SpmdGroup& pool, const HybridLayout& layout,
                           const std::string& name, HybridEngineOptions options)
    : model_(std::move(model)),
      layout_(layout),
      placement_(layout.placement(pool.rank())),
      options_(options) {
  check_fits(*model_, pool, layout_, placement_);
  if (options_.piece_bytes < static_cast<int64_t>(sizeof(float)))
    throw std::invalid_argument("HybridEngine: 'piece_bytes' = " + std::to_string(options_.piece_bytes) +
                                " must hold at least one float");
  // Every rank makes its groups in one order -- micro-DP, generation TP,
  // generation PP, generation vocabulary -- and each kind partitions the
  // pool, so the members of every group meet without waiting on another.
  const int rank = pool.rank();
  const int stages_per = layout_.train().pp / layout_.generate().pp;
  if (layout_.micro_dp_size() > 1) {
    const std::vector<int> ranks = layout_.micro_dp_ranks(rank);
    micro_dp_ = pool.subgroup(group_name(name, "micro_dp", ranks), ranks);
  }
  if (layout_.generate().tp > 1) {
    const std::vector<int> ranks = layout_.generation_tp_ranks(rank);
    generation_tp_ = pool.subgroup(group_name(name, "generation_tp", ranks), ranks);
  }
  if (layout_.generate().pp > 1) {
    const std::vector<int> ranks = layout_.generation_pp_ranks(rank);
    generation_pp_ = pool.subgroup(group_name(name, "generation_pp", ranks), ranks);
    const std::vector<int> vocab = layout_.generation_vocab_ranks(rank);
    generation_vocab_ = pool.subgroup(group_name(name, "generation_vocab", vocab), vocab);
  }
  const torch::Device device = model_->tok_embeddings->weight.device();
  const BufferBacking backing =
      options_.backing.value_or(device.is_cpu() ? BufferBacking::kMapped : BufferBacking::kAllocated);
  torch::NoGradGuard no_grad;
  for (auto& item : model_->named_parameters()) {
    torch::Tensor& p = item.value();
    const int64_t layer = model::layer_of_parameter(item.key());
    if (layer >= 0 && !model_->holds_layer(layer)) continue;  // another stage's block: empty
    const int64_t dim = model::tensor_parallel_dim(item.key());
    const bool from_other_stages = layer >= 0 && stages_per > 1;
    if (dim < 0 && !from_other_stages) {
      replicated_.push_back(p);
      continue;
    }
    // Every split parameter is gathered over the whole micro-DP group: a
    // block's slots are the group's stages' blocks at this position, each
    // in its tp shards; the embedding's and the head's are the group's
    // vocabulary shares, which make up this rank's generation share
    // (mesh_groups.h, vocab_index).
    SplitParameter split{
        item.key(),
        p,
        dim,
        from_other_stages ? stages_per : 1,
        micro_dp_.get(),
        GenerationBuffer(p.numel(), layout_.micro_dp_size(), placement_.micro_dp_index, backing, p.device())};
    torch::Tensor own = split.buffer.own_slot().view(p.sizes());
    own.copy_(p.detach());
    p.set_data(own);  // the parameter's old storage is freed here
    split_.push_back(std::move(split));
  }
}

HybridEngine::~HybridEngine() {
  generation_.reset();
  // The training parameters keep their buffers alive; only the gathered
  // memory goes (a failed madvise leaves it resident, nothing worse).
  try {
    release_gathered_slots();
  } catch (const std::exception&) {
  }
}

void HybridEngine::view_own_slot(SplitParameter& s) {
  if (s.buffer.backing() == BufferBacking::kAllocated)
    s.parameter.set_data(s.buffer.own_slot().view(s.parameter.sizes()));
}

void HybridEngine::release_gathered_slots() {
  for (auto& s : split_) {
    s.buffer.release_other_slots();
    view_own_slot(s);  // an allocated buffer's whole shard goes here
  }
}

void HybridEngine::to_generation() {
  if (generating()) return;
  bytes_received_ = 0;
  torch::NoGradGuard no_grad;
  const int64_t piece = std::max<int64_t>(1, options_.piece_bytes / static_cast<int64_t>(sizeof(float)));
  for (auto& s : split_) {
    const int slots = s.buffer.slots(), own = s.buffer.own_slot_index();
    if (slots == 1) continue;
    s.buffer.hold_all_slots();
    view_own_slot(s);  // an allocated buffer's old own slot goes here
    const torch::Tensor mine = s.buffer.own_slot();
    const int64_t n = s.buffer.slot_numel();
    for (int64_t start = 0; start < n; start += piece) {
      const int64_t len = std::min(piece, n - start);
      std::vector<torch::Tensor> parts = s.group->all_gather(mine.narrow(0, start, len));
      for (int k = 0; k < slots; ++k)
        if (k != own) s.buffer.slot(k).narrow(0, start, len).copy_(parts[k]);
      bytes_received_ += (slots - 1) * len * static_cast<int64_t>(sizeof(float));
    }
  }
  const model::TensorParallel tp{generation_tp_.get(), placement_.generation_tp_index, layout_.generate().tp};
  const int generation_ranks = layout_.generate().pp * layout_.generate().tp;
  const model::PipelineParallel pp{
      generation_pp_.get(),
      placement_.generation_stage,
      layout_.generate().pp,
      1,
      {generation_vocab_.get(),
       placement_.generation_stage * layout_.generate().tp + placement_.generation_tp_index,
       generation_ranks}};
  generation_.emplace(model_->config(), gathered_weights(), tp, pp);
}

void HybridEngine::to_training() {
  if (!generating()) return;
  generation_.reset();
  release_gathered_slots();
}

GenerationLayoutModel& HybridEngine::generation_model() {
  if (!generation_)
    throw std::logic_error(
        "HybridEngine: the generation model exists between to_generation() and to_training(); "
        "call to_generation() first");
  return *generation_;
}

const GenerationBuffer& HybridEngine::buffer_of(const std::string& parameter_name) const {
  for (const auto& s : split_)
    if (s.name == parameter_name) return s.buffer;
  throw std::invalid_argument("HybridEngine: '" + parameter_name +
                              "' is not a split parameter (see tensor_parallel_dim)");
}

int64_t HybridEngine::resident_parameter_bytes() const {
  int64_t bytes = 0;
  for (const auto& s : split_) bytes += s.buffer.resident_bytes();
  for (const auto& p : replicated_) bytes += static_cast<int64_t>(p.nbytes());
  return bytes;
}

// The generation shard of every parameter, as views of the buffers:
// dimension-0 splits as [ts * rows, ...], dimension-1 splits as ts column
// blocks [ts, out, in/t] (generation_layout_model.h says why), where
// ts = t/t_g. A block's buffer holds the blocks at its position of the
// micro-DP group's stages one after another, [p/p_g, ts, shard]: the
// model's layer l of this generation stage lies in part k = l's training
// stage - the first of this group's, at the position of this rank's own
// block with the same offset in its stage.
GenerationWeights HybridEngine::gathered_weights() const {
  const int64_t layers = model_->config().num_layers;
  const int pp = layout_.train().pp, stages_per = pp / layout_.generate().pp;
  const int64_t tps_per = layout_.train().tp / layout_.generate().tp;
  std::map<std::string, const SplitParameter*> split_by_name;
  for (const auto& s : split_) split_by_name[s.name] = &s;
  std::map<std::string, torch::Tensor> replicated;
  for (const auto& item : model_->named_parameters())
    if (!split_by_name.count(item.key())) replicated[item.key()] = item.value().detach();
  auto view = [&](const std::string& name, int part) {
    auto it = split_by_name.find(name);
    if (it == split_by_name.end()) {  // replicated: the parameter itself, or absent (no bias)
      auto r = replicated.find(name);
      return r == replicated.end() ? torch::Tensor() : r->second;
    }
    const SplitParameter& s = *it->second;
    if (model::is_vocab_parameter(name)) {  // the micro-DP group's shares: the generation share
      std::vector<int64_t> rows = s.parameter.sizes().vec();
      rows[0] *= s.buffer.slots();
      return s.buffer.all_slots().view(rows);
    }
    std::vector<int64_t> shape = s.parameter.sizes().vec();
    shape.insert(shape.begin(), {s.stage_parts, tps_per});
    torch::Tensor ours = s.buffer.all_slots().view(shape)[part];  // [ts, shard...]
    if (s.dim < 0) return ours[0];                                // replicated over tp: any copy
    if (s.dim > 0) return ours;                                   // column blocks
    std::vector<int64_t> rows = s.parameter.sizes().vec();
    rows[0] *= tps_per;
    return ours.view(rows);
  };
  GenerationWeights w;
  w.tok_embeddings = view("tok_embeddings.weight", 0);
  w.norm = view("norm.weight", 0);
  w.lm_head = model_->config().tie_word_embeddings ? w.tok_embeddings : view("lm_head.weight", 0);
  const model::Shard mine = model::layers_of_stage(layers, placement_.stage, pp);
  const model::Shard generated =
      model::layers_of_stage(layers, placement_.generation_stage, layout_.generate().pp);
  w.first_layer = generated.start;
  for (int64_t l = generated.start; l < generated.start + generated.size; ++l) {
    const int stage = model::stage_of_layer(l, layers, pp);
    const int part = stage - placement_.generation_stage * stages_per;
    const int64_t offset = l - model::layers_of_stage(layers, stage, pp).start;
    const std::string at = "layers." + std::to_string(mine.start + offset) + ".";
    auto get = [&](const char* suffix) { return view(at + suffix, part); };
    GenerationLayerWeights g;
    g.attn_norm = get("attn_norm.weight");
    g.ffn_norm = get("ffn_norm.weight");
    g.wq = get("wq.weight");
    g.wk = get("wk.weight");
    g.wv = get("wv.weight");
    g.wq_bias = get("wq.bias");
    g.wk_bias = get("wk.bias");
    g.wv_bias = get("wv.bias");
    g.wo_blocks = get("wo.weight");
    g.wo_bias = get("wo.bias");
    g.ffn_gate = get("ffn_gate.weight");
    g.ffn_up = get("ffn_up.weight");
    g.ffn_gate_bias = get("ffn_gate.bias");
    g.ffn_up_bias = get("ffn_up.bias");
    g.ffn_down_blocks = get("ffn_down.weight");
    g.ffn_down_bias = get("ffn_down.bias");
    w.layers.push_back(std::move(g));
  }
  return w;
}

}  // namespace rlwb::workers::hybrid_engine
