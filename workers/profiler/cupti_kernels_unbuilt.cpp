// CuptiKernels in a program linked without LibTorch's CUDA libraries, or
// where CMake found no cupti.h (cupti_kernels.h): start() says which, and
// nothing else does anything.
#include "workers/profiler/cupti_kernels.h"

#include "core/profile/context_tree.h"

namespace rlwb::workers::profiler {

struct CuptiKernels::Records {};

CuptiKernels& CuptiKernels::instance() {
  static CuptiKernels kernels;
  return kernels;
}

CuptiKernels::CuptiKernels() : records_(std::make_unique<Records>()) {}

CuptiKernels::~CuptiKernels() = default;

bool CuptiKernels::start() {
  started_ = true;
  why_ =
      "CUPTI not in this program: it was linked without CUDA, or cupti.h was not found when RLWB was "
      "configured";
  return false;
}

bool CuptiKernels::enable() { return false; }

void CuptiKernels::enter(core::profile::Frame*) {}

void CuptiKernels::leave() {}

std::vector<std::string> CuptiKernels::fold(core::profile::ContextTree&) { return {}; }

}  // namespace rlwb::workers::profiler
