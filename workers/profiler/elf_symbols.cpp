#include "workers/profiler/elf_symbols.h"

#include <elf.h>
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>
#include <limits>

namespace rlwb::workers::profiler {

namespace {

// The file mapped read-only for the parse, unmapped after.
struct MappedFile {
  const unsigned char* data = nullptr;
  size_t size = 0;
  explicit MappedFile(const std::string& path) {
    const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) return;
    struct stat st {};
    if (::fstat(fd, &st) == 0 && st.st_size > 0) {
      void* p = ::mmap(nullptr, static_cast<size_t>(st.st_size), PROT_READ, MAP_PRIVATE, fd, 0);
      if (p != MAP_FAILED)
        data = static_cast<const unsigned char*>(p), size = static_cast<size_t>(st.st_size);
    }
    ::close(fd);
  }
  ~MappedFile() {
    if (data) ::munmap(const_cast<unsigned char*>(data), size);
  }
  bool holds(uint64_t offset, uint64_t length) const { return offset <= size && length <= size - offset; }
};

}  // namespace

ElfFunctions::ElfFunctions(const std::string& path) {
  MappedFile file(path);
  if (!file.data || !file.holds(0, sizeof(Elf64_Ehdr))) return;
  Elf64_Ehdr header;
  std::memcpy(&header, file.data, sizeof header);
  if (std::memcmp(header.e_ident, ELFMAG, SELFMAG) != 0 || header.e_ident[EI_CLASS] != ELFCLASS64) return;
  position_independent_ = header.e_type == ET_DYN;
  uint64_t lowest = std::numeric_limits<uint64_t>::max();
  for (unsigned i = 0; i < header.e_phnum; ++i) {
    Elf64_Phdr ph;
    const uint64_t at = header.e_phoff + uint64_t{i} * header.e_phentsize;
    if (!file.holds(at, sizeof ph)) return;
    std::memcpy(&ph, file.data + at, sizeof ph);
    if (ph.p_type == PT_LOAD) lowest = std::min(lowest, ph.p_vaddr & ~uint64_t{0xfff});
  }
  first_load_address_ = lowest == std::numeric_limits<uint64_t>::max() ? 0 : lowest;
  auto section = [&](unsigned index, Elf64_Shdr& out) {
    const uint64_t at = header.e_shoff + uint64_t{index} * header.e_shentsize;
    if (index >= header.e_shnum || !file.holds(at, sizeof out)) return false;
    std::memcpy(&out, file.data + at, sizeof out);
    return true;
  };
  for (unsigned i = 0; i < header.e_shnum; ++i) {
    Elf64_Shdr table, strings;
    if (!section(i, table) || table.sh_type != SHT_SYMTAB || table.sh_entsize != sizeof(Elf64_Sym)) continue;
    if (!section(table.sh_link, strings) || !file.holds(table.sh_offset, table.sh_size) ||
        !file.holds(strings.sh_offset, strings.sh_size))
      return;
    const char* names = reinterpret_cast<const char*>(file.data + strings.sh_offset);
    for (uint64_t k = 0; k < table.sh_size / sizeof(Elf64_Sym); ++k) {
      Elf64_Sym sym;
      std::memcpy(&sym, file.data + table.sh_offset + k * sizeof sym, sizeof sym);
      if (ELF64_ST_TYPE(sym.st_info) != STT_FUNC || sym.st_value == 0 || sym.st_size == 0 ||
          sym.st_name >= strings.sh_size)
        continue;
      const char* name = names + sym.st_name;
      symbols_.push_back(
          {sym.st_value, sym.st_size, std::string(name, strnlen(name, strings.sh_size - sym.st_name))});
    }
  }
  std::sort(symbols_.begin(), symbols_.end(),
            [](const Symbol& a, const Symbol& b) { return a.start < b.start; });
}

uintptr_t ElfFunctions::load_bias(uintptr_t module_base) const {
  return position_independent_ ? module_base - first_load_address_ : 0;
}

const ElfFunctions::Symbol* ElfFunctions::find(uintptr_t address, uintptr_t module_base) const {
  const uint64_t vaddr = address - load_bias(module_base);
  auto it = std::upper_bound(symbols_.begin(), symbols_.end(), vaddr,
                             [](uint64_t v, const Symbol& s) { return v < s.start; });
  if (it == symbols_.begin()) return nullptr;
  --it;
  return vaddr < it->start + it->size ? &*it : nullptr;
}

uintptr_t ElfFunctions::runtime_start(const Symbol& s, uintptr_t module_base) const {
  return static_cast<uintptr_t>(s.start) + load_bias(module_base);
}

}  // namespace rlwb::workers::profiler
