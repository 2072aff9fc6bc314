#include "workers/hybrid_engine/hybrid_engine.h"

#include <torch/torch.h>

#include <algorithm>
#include <map>
#include <stdexcept>

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
  if (layout.train().pp != 1 || layout.generate().pp != 1)
    throw HybridLayoutError(where + "pipeline parallelism is not built yet; set 'pp' = 1 in both layouts");
  if (pool.world() != layout.world())
    throw HybridLayoutError(where + "the layout has " + std::to_string(layout.world()) +
                            " ranks (pp * tp * dp) but the pool has " + std::to_string(pool.world()) +
                            "; make dp * tp * pp equal the pool's ranks");
  const model::TensorParallel& tp = m.tensor_parallel();
  if (tp.size != layout.train().tp || tp.rank != at.tp_index)
    throw HybridLayoutError(where + "the model is sharded as tp rank " + std::to_string(tp.rank) + " of " +
                            std::to_string(tp.size) + " but the layout puts pool rank " +
                            std::to_string(pool.rank()) + " at tp rank " + std::to_string(at.tp_index) +
                            " of " + std::to_string(layout.train().tp) +
                            "; shard it with the layout's training TP group (make_mesh_groups) first");
  if (m.config().vocab_size % layout.train().tp != 0)
    throw HybridLayoutError(where + "'vocab_size' = " + std::to_string(m.config().vocab_size) +
                            " does not divide by the training tp = " + std::to_string(layout.train().tp) +
                            "; the engine gathers equal shards: pad the vocabulary to a multiple of tp");
  if (m.config().head != model::Head::kLanguageModel)
    throw HybridLayoutError(where + "the model has a value head; only a language model generates");
  for (const auto& p : m.parameters())
    if (p.scalar_type() != torch::kFloat32 || !p.device().is_cpu())
      throw HybridLayoutError(where +
                              "parameters must be float32 on the CPU (the buffers are host memory); "
                              "cast the model with ->to(torch::kCPU, torch::kFloat32)");
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
  // Every rank makes its micro-DP group first, then its generation TP
  // group: the members of each meet in the same order.
  const int rank = pool.rank();
  if (layout_.micro_dp_size() > 1) {
    const std::vector<int> ranks = layout_.micro_dp_ranks(rank);
    micro_dp_ = pool.subgroup(group_name(name, "micro_dp", ranks), ranks);
  }
  if (layout_.generate().tp > 1) {
    const std::vector<int> ranks = layout_.generation_tp_ranks(rank);
    generation_tp_ = pool.subgroup(group_name(name, "generation_tp", ranks), ranks);
  }
  torch::NoGradGuard no_grad;
  for (auto& item : model_->named_parameters()) {
    torch::Tensor& p = item.value();
    const int64_t dim = model::tensor_parallel_dim(item.key());
    if (dim < 0) {
      replicated_.push_back(p);
      continue;
    }
    GenerationBuffer buffer(p.numel(), layout_.micro_dp_size(), placement_.micro_dp_index);
    torch::Tensor own = buffer.own_slot().view(p.sizes());
    own.copy_(p.detach());
    p.set_data(own);  // the parameter's old storage is freed here
    split_.push_back({item.key(), p, dim, std::move(buffer)});
  }
}

HybridEngine::~HybridEngine() {
  generation_.reset();
  // The training parameters keep their buffers alive; only the gathered
  // pages go (a failed madvise leaves them resident, nothing worse).
  try {
    for (auto& s : split_) s.buffer.release_other_slots();
  } catch (const std::exception&) {
  }
}

void HybridEngine::to_generation() {
  if (generating()) return;
  bytes_received_ = 0;
  if (micro_dp_) {
    torch::NoGradGuard no_grad;
    const int slots = layout_.micro_dp_size(), own = placement_.micro_dp_index;
    const int64_t piece = std::max<int64_t>(1, options_.piece_bytes / static_cast<int64_t>(sizeof(float)));
    for (auto& s : split_) {
      const torch::Tensor mine = s.buffer.own_slot();
      const int64_t n = s.buffer.slot_numel();
      for (int64_t start = 0; start < n; start += piece) {
        const int64_t len = std::min(piece, n - start);
        std::vector<torch::Tensor> parts = micro_dp_->all_gather(mine.narrow(0, start, len));
        for (int k = 0; k < slots; ++k)
          if (k != own) s.buffer.slot(k).narrow(0, start, len).copy_(parts[k]);
        bytes_received_ += (slots - 1) * len * static_cast<int64_t>(sizeof(float));
      }
    }
  }
  const model::TensorParallel tp{generation_tp_.get(), placement_.generation_tp_index, layout_.generate().tp};
  generation_.emplace(model_->config(), gathered_weights(), tp);
}

void HybridEngine::to_training() {
  if (!generating()) return;
  generation_.reset();
  for (auto& s : split_) s.buffer.release_other_slots();
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
// dimension-0 splits as [d_g * rows, ...], dimension-1 splits as d_g
// column blocks [d_g, out, in/t] (generation_layout_model.h says why).
GenerationWeights HybridEngine::gathered_weights() const {
  std::map<std::string, torch::Tensor> by_name;
  const int64_t slots = layout_.micro_dp_size();
  for (const auto& s : split_) {
    std::vector<int64_t> shape = s.parameter.sizes().vec();
    torch::Tensor all = s.buffer.all_slots();
    if (s.dim == 0) {
      shape[0] *= slots;
    } else {
      shape.insert(shape.begin(), slots);
    }
    by_name[s.name] = all.view(shape);
  }
  for (const auto& item : model_->named_parameters())
    if (!by_name.count(item.key())) by_name[item.key()] = item.value().detach();
  auto get = [&](const std::string& key) {
    auto it = by_name.find(key);
    return it == by_name.end() ? torch::Tensor() : it->second;
  };
  GenerationWeights w;
  w.tok_embeddings = get("tok_embeddings.weight");
  w.norm = get("norm.weight");
  w.lm_head = model_->config().tie_word_embeddings ? w.tok_embeddings : get("lm_head.weight");
  for (int64_t i = 0; i < model_->config().num_layers; ++i) {
    const std::string at = "layers." + std::to_string(i) + ".";
    GenerationLayerWeights l;
    l.attn_norm = get(at + "attn_norm.weight");
    l.ffn_norm = get(at + "ffn_norm.weight");
    l.wq = get(at + "wq.weight");
    l.wk = get(at + "wk.weight");
    l.wv = get(at + "wv.weight");
    l.wq_bias = get(at + "wq.bias");
    l.wk_bias = get(at + "wk.bias");
    l.wv_bias = get(at + "wv.bias");
    l.wo_blocks = get(at + "wo.weight");
    l.wo_bias = get(at + "wo.bias");
    l.ffn_gate = get(at + "ffn_gate.weight");
    l.ffn_up = get(at + "ffn_up.weight");
    l.ffn_gate_bias = get(at + "ffn_gate.bias");
    l.ffn_up_bias = get(at + "ffn_up.bias");
    l.ffn_down_blocks = get(at + "ffn_down.weight");
    l.ffn_down_bias = get(at + "ffn_down.bias");
    w.layers.push_back(std::move(l));
  }
  return w;
}

}  // namespace rlwb::workers::hybrid_engine
