// HybridLayout::training_mesh(): apart from hybrid_layout.cpp because
// core::Mesh lives in core/rpc/dispatch.h, which brings LibTorch, and the
// rest of HybridLayout links into the torch-free planner.
#include "core/rpc/dispatch.h"
#include "workers/hybrid_engine/hybrid_layout.h"

namespace rlwb::workers::hybrid_engine {

core::Mesh HybridLayout::training_mesh() const { return {train_.dp, train_.pp, train_.tp}; }

}  // namespace rlwb::workers::hybrid_engine
