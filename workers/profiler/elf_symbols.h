// The function symbols of an ELF file's full symbol table (.symtab), for
// naming native frames that dladdr cannot: dladdr sees only the dynamic
// symbols, so a static function or one in an anonymous namespace comes
// back nameless (and without its start, so each call site would be a frame
// of its own). Reads the file once; a stripped or unreadable file gives an
// empty table, and the caller falls back to module+offset.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace rlwb::workers::profiler {

class ElfFunctions {
 public:
  struct Symbol {
    uint64_t start = 0, size = 0;  // virtual addresses as the file states them
    std::string name;              // mangled
  };

  explicit ElfFunctions(const std::string& path);

  // The function whose [start, start + size) holds `address`, or nullptr.
  // `address` is a run-time address in the module loaded at `module_base`
  // (dladdr's dli_fbase).
  const Symbol* find(uintptr_t address, uintptr_t module_base) const;
  // The run-time address of a symbol's start in the module at `module_base`.
  uintptr_t runtime_start(const Symbol& s, uintptr_t module_base) const;
  size_t size() const { return symbols_.size(); }

 private:
  uintptr_t load_bias(uintptr_t module_base) const;

  std::vector<Symbol> symbols_;  // sorted by start
  bool position_independent_ = true;
  uint64_t first_load_address_ = 0;  // the lowest PT_LOAD's page-aligned vaddr
};

}  // namespace rlwb::workers::profiler
