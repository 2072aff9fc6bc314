#include "core/planner/model_shape.h"

#include "core/planner/plan_error.h"

namespace rlwb::core::planner {

double ModelShape::layer_parameters() const {
  const double e = hidden_size, d = head_dim();
  const double attention = e * (num_heads * d) + 2 * e * (num_kv_heads * d) + (num_heads * d) * e;
  const double mlp = 3 * e * intermediate_size;
  return attention + mlp + 2 * e;
}

double ModelShape::parameters() const {
  const double e = hidden_size;
  const double head = value_head ? e : (tied_embeddings ? 0.0 : e * vocab_size);
  return vocab_size * e + num_layers * layer_parameters() + e + head;
}

double ModelShape::weight_flops_per_token() const {
  const double e = hidden_size;
  const double head = value_head ? e : e * vocab_size;
  return 2.0 * (num_layers * layer_parameters() + head);
}

double ModelShape::attention_flops_per_token(double context) const {
  return 4.0 * num_layers * num_heads * head_dim() * context;
}

double ModelShape::kv_values_per_token() const { return 2.0 * num_layers * num_kv_heads * head_dim(); }

ModelShape llama_shape(const std::string& size, bool value_head) {
  ModelShape s;
  if (size == "7b")
    s = {4096, 11008, 32, 32, 32, 32000};
  else if (size == "13b")
    s = {5120, 13824, 40, 40, 40, 32000};
  else if (size == "34b")
    s = {8192, 22016, 48, 64, 8, 32000};
  else if (size == "70b")
    s = {8192, 28672, 80, 64, 8, 32000};
  else
    throw PlanError("no Llama shape '" + size + "'; use 7b, 13b, 34b or 70b");
  s.value_head = value_head;
  return s;
}

ModelShape model_shape_of(const config::ModelShapeOptions& options, int64_t tokenizer_vocab,
                          bool value_head) {
  ModelShape shape;
  shape.hidden_size = options.hidden_size;
  shape.intermediate_size = options.resolved_intermediate_size();
  shape.num_layers = options.num_layers;
  shape.num_heads = options.num_heads;
  shape.num_kv_heads = options.resolved_kv_heads();
  shape.vocab_size = options.vocab_size.value_or(tokenizer_vocab);
  shape.tied_embeddings = options.tie_word_embeddings;
  shape.value_head = value_head;
  return shape;
}

}  // namespace rlwb::core::planner
