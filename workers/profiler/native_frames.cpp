#include "workers/profiler/native_frames.h"

#include <cxxabi.h>
#include <dlfcn.h>
#include <execinfo.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>

namespace rlwb::workers::profiler {

using core::profile::Frame;
using core::profile::FrameKind;

namespace {

constexpr int kMaxDepth = 64;

bool is_runtime_module(const char* path) {
  if (!path) return true;
  const char* base = std::strrchr(path, '/');
  base = base ? base + 1 : path;
  for (const char* lib : {"libtorch", "libc10", "libgomp", "libc.so", "libstdc++", "libgcc", "ld-linux",
                          "libmkl", "libdnnl", "libiomp", "libpthread"})
    if (std::strncmp(base, lib, std::strlen(lib)) == 0) return true;
  return false;
}

std::string demangled(const char* symbol) {
  int status = 0;
  std::unique_ptr<char, decltype(&std::free)> name(abi::__cxa_demangle(symbol, nullptr, nullptr, &status),
                                                   &std::free);
  std::string text = status == 0 && name ? name.get() : symbol;
  // Arguments and templates make paths long and split one function in many rows.
  if (auto paren = text.find('('); paren != std::string::npos && paren > 0) text.resize(paren);
  return text.size() > 160 ? text.substr(0, 157) + "..." : text;
}

void rename_natives(Frame& f) {
  for (auto& c : f.children) rename_natives(*c);
  if (f.kind != FrameKind::native || f.name.rfind("0x", 0) != 0) return;
  void* addr = reinterpret_cast<void*>(std::strtoull(f.name.c_str(), nullptr, 16));
  Dl_info info;
  if (dladdr(addr, &info) && info.dli_sname) {
    f.name = demangled(info.dli_sname);
  } else if (info.dli_fname) {
    char offset[32];
    std::snprintf(offset, sizeof offset, "+0x%lx",
                  static_cast<unsigned long>(static_cast<char*>(addr) - static_cast<char*>(info.dli_fbase)));
    const char* base = std::strrchr(info.dli_fname, '/');
    f.name = std::string(base ? base + 1 : info.dli_fname) + offset;
  }
}

}  // namespace

void NativeFrames::enter_call() {
  void* frames[kMaxDepth];
  int n = backtrace(frames, kMaxDepth);
  scope_stack_.assign(frames, frames + n);
}

const NativeFrames::Address& NativeFrames::classify(void* pc) {
  auto it = addresses_.find(pc);
  if (it != addresses_.end()) return it->second;
  Address a;
  Dl_info info;
  if (dladdr(pc, &info)) {
    a.ours = !is_runtime_module(info.dli_fname);
    char key[32];
    std::snprintf(key, sizeof key, "0x%lx",
                  reinterpret_cast<unsigned long>(info.dli_saddr ? info.dli_saddr : pc));
    a.function = key;
  }
  return addresses_.emplace(pc, std::move(a)).first->second;
}

Frame* NativeFrames::attach(Frame* parent, const MakeChild& make_child) {
  void* frames[kMaxDepth];
  int n = backtrace(frames, kMaxDepth);
  // Drop the frames the call scope's stack ends with (the worker's loop, the
  // method's dispatch): compare from the outermost end.
  int shared = 0;
  while (shared < n && shared < static_cast<int>(scope_stack_.size()) &&
         frames[n - 1 - shared] == scope_stack_[scope_stack_.size() - 1 - shared])
    ++shared;
  // Innermost first: this callback, then LibTorch's dispatch; RLWB's frames
  // start after the first LibTorch frame.
  int i = 0;
  while (i < n - shared && classify(frames[i]).ours) ++i;  // the profiler's own frames
  std::vector<const Address*> path;
  for (; i < n - shared; ++i) {
    const Address& a = classify(frames[i]);
    if (a.ours && (path.empty() || path.back()->function != a.function)) path.push_back(&a);
  }
  Frame* at = parent;
  for (auto it = path.rbegin(); it != path.rend(); ++it) at = make_child(at, (*it)->function.c_str());
  return at;
}

void NativeFrames::symbolize(core::profile::ContextTree& tree) { rename_natives(tree.root()); }

}  // namespace rlwb::workers::profiler
