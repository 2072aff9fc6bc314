#include "workers/profiler/native_frames.h"

#include <cxxabi.h>
#include <dlfcn.h>
#include <execinfo.h>
#include <unistd.h>

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
  // The parameters start at the first '(' outside template arguments;
  // "(anonymous namespace)" is part of the name.
  static const std::string anonymous = "(anonymous namespace)";
  int depth = 0;
  for (size_t i = 0; i < text.size(); ++i) {
    if (text[i] == '<') ++depth;
    if (text[i] == '>' && depth > 0) --depth;
    if (text[i] != '(' || depth > 0) continue;
    if (text.compare(i, anonymous.size(), anonymous) == 0) {
      i += anonymous.size() - 1;
      continue;
    }
    if (i > 0) text.resize(i);
    break;
  }
  return text.size() > 160 ? text.substr(0, 157) + "..." : text;
}

void rename_natives(Frame& f, const std::unordered_map<std::string, std::string>& symtab_names) {
  for (auto& c : f.children) rename_natives(*c, symtab_names);
  if (f.kind != FrameKind::native || f.name.rfind("0x", 0) != 0) return;
  if (auto it = symtab_names.find(f.name); it != symtab_names.end()) {
    f.name = demangled(it->second.c_str());
    return;
  }
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

std::string hex_key(uintptr_t address) {
  char key[32];
  std::snprintf(key, sizeof key, "0x%lx", static_cast<unsigned long>(address));
  return key;
}

}  // namespace

void NativeFrames::enter_call() {
  void* frames[kMaxDepth];
  int n = backtrace(frames, kMaxDepth);
  scope_stack_.assign(frames, frames + n);
}

const ElfFunctions& NativeFrames::functions_of(const char* module) {
  auto& table = modules_[module];
  if (!table) {
    // dladdr names the main program by argv[0], which may be relative to a
    // directory the worker has left: read it as /proc/self/exe then.
    const bool readable = module[0] != '\0' && ::access(module, R_OK) == 0;
    table = std::make_unique<ElfFunctions>(readable ? module : "/proc/self/exe");
  }
  return *table;
}

const NativeFrames::Address& NativeFrames::classify(void* pc) {
  auto it = addresses_.find(pc);
  if (it != addresses_.end()) return it->second;
  Address a;
  Dl_info info;
  if (dladdr(pc, &info)) {
    a.ours = !is_runtime_module(info.dli_fname);
    uintptr_t start = reinterpret_cast<uintptr_t>(info.dli_saddr);
    if (!info.dli_saddr && a.ours && info.dli_fname) {
      const uintptr_t base = reinterpret_cast<uintptr_t>(info.dli_fbase);
      const ElfFunctions& functions = functions_of(info.dli_fname);
      if (const ElfFunctions::Symbol* s = functions.find(reinterpret_cast<uintptr_t>(pc), base)) {
        start = functions.runtime_start(*s, base);
        symtab_names_.emplace(hex_key(start), s->name);
      }
    }
    a.function = hex_key(start ? start : reinterpret_cast<uintptr_t>(pc));
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

void NativeFrames::symbolize(core::profile::ContextTree& tree) { rename_natives(tree.root(), symtab_names_); }

}  // namespace rlwb::workers::profiler
