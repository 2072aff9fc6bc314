// HybridLayout::training_mesh() and generation_mesh(): apart from hybrid_layout.cpp because
// core::Mesh lives in core/rpc/dispatch.h, which brings LibTorch, and the
// rest of HybridLayout links into the torch-free planner.
#include "core/rpc/dispatch.h"
#include "workers/hybrid_engine/hybrid_layout.h"

namespace rlwb::workers::hybrid_engine {

core::Mesh HybridLayout::training_mesh() const { return {train_.dp, train_.pp, train_.tp}; }

core::Mesh HybridLayout::generation_mesh() const {
  const std::optional<core::Mesh> mesh = core::generation_mesh(training_mesh(), generate_.pp, generate_.tp);
  if (!mesh)
    throw HybridLayoutError(
        "generation_mesh: a generation layout with p_g = " + std::to_string(generate_.pp) +
        " < p = " + std::to_string(train_.pp) + " and t_g = " + std::to_string(generate_.tp) +
        " > 1 interleaves its replicas in a way core::Mesh cannot describe; use p_g = p "
        "or t_g = 1");
  return *mesh;
}

}  // namespace rlwb::workers::hybrid_engine
