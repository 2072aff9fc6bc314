// Native call paths for the profiler (profile.native_stacks): the frames of
// RLWB's own code between a profiled method and each top-level operator it
// calls, from backtrace(), cut at the LibTorch boundary (frames inside
// libtorch, libc10 and the C/C++ runtime are left out) and above the
// method (what the call scope's own stack shares). Frames are keyed by
// their function's address while profiling and named in one batch at
// collect time (dladdr and the demangler), because naming costs far more
// than unwinding. A function that dladdr cannot name (static, or in an
// anonymous namespace) is found in its module's full symbol table
// (elf_symbols.h), read once per module the first time one of its frames
// is seen.
#pragma once

#include "core/profile/context_tree.h"
#include "workers/profiler/elf_symbols.h"

#include <memory>
#include <functional>
#include <string>
#include <unordered_map>
#include <vector>

namespace rlwb::workers::profiler {

class NativeFrames {
 public:
  using MakeChild = std::function<core::profile::Frame*(core::profile::Frame* parent, const char* name)>;

  // The call scope's stack, whose frames no operator path repeats.
  void enter_call();
  // The native frames of the current operator under `parent`; returns the
  // innermost (or `parent` when there is none).
  core::profile::Frame* attach(core::profile::Frame* parent, const MakeChild& make_child);
  // Names every native frame of `tree` ("0x..." -> function name).
  void symbolize(core::profile::ContextTree& tree);

 private:
  struct Address {
    bool ours = false;     // in RLWB's code, not LibTorch's or the runtime's
    std::string function;  // "0x<function start>": the frame's key
  };
  const Address& classify(void* pc);
  const ElfFunctions& functions_of(const char* module);

  std::vector<void*> scope_stack_;
  std::unordered_map<void*, Address> addresses_;
  std::unordered_map<std::string, std::unique_ptr<ElfFunctions>> modules_;
  std::unordered_map<std::string, std::string> symtab_names_;  // key "0x<start>" -> mangled name
};

}  // namespace rlwb::workers::profiler
