#include "workers/hybrid_engine/generation_buffer.h"

#include <sys/mman.h>
#include <torch/torch.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <stdexcept>
#include <string>
#include <vector>

namespace rlwb::workers::hybrid_engine {

struct GenerationBuffer::Mapping {
  void* base = nullptr;
  size_t bytes = 0;
  ~Mapping() {
    if (base != nullptr) ::munmap(base, bytes);
  }
};

namespace {

size_t page_size() { return static_cast<size_t>(::sysconf(_SC_PAGESIZE)); }

}  // namespace

GenerationBuffer::GenerationBuffer(int64_t slot_numel, int slots, int own_slot)
    : mapping_(std::make_shared<Mapping>()), slot_numel_(slot_numel), slots_(slots), own_(own_slot) {
  if (slot_numel <= 0 || slots <= 0 || own_slot < 0 || own_slot >= slots)
    throw std::invalid_argument("GenerationBuffer: slot " + std::to_string(own_slot) + " of " +
                                std::to_string(slots) + " slots of " + std::to_string(slot_numel) +
                                " floats is not a buffer; every size must be positive");
  mapping_->bytes = static_cast<size_t>(slot_numel) * slots * sizeof(float);
  // Private anonymous pages cost nothing until written; MAP_NORESERVE so
  // that reserving the generation size does not count against overcommit.
  void* base = ::mmap(nullptr, mapping_->bytes, PROT_READ | PROT_WRITE,
                      MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  if (base == MAP_FAILED)
    throw std::runtime_error("GenerationBuffer: could not reserve " + std::to_string(mapping_->bytes) +
                             " bytes: " + std::strerror(errno));
  mapping_->base = base;
}

torch::Tensor GenerationBuffer::slot(int index) const {
  float* start = static_cast<float*>(mapping_->base) + static_cast<int64_t>(index) * slot_numel_;
  std::shared_ptr<Mapping> keep = mapping_;
  return torch::from_blob(
      start, {slot_numel_}, [keep](void*) mutable { keep.reset(); }, torch::kFloat32);
}

torch::Tensor GenerationBuffer::own_slot() const { return slot(own_); }

torch::Tensor GenerationBuffer::all_slots() const {
  std::shared_ptr<Mapping> keep = mapping_;
  return torch::from_blob(
      mapping_->base, {slot_numel_ * slots_}, [keep](void*) mutable { keep.reset(); }, torch::kFloat32);
}

void GenerationBuffer::release_other_slots() {
  const size_t page = page_size();
  auto* base = static_cast<char*>(mapping_->base);
  const size_t slot_bytes = static_cast<size_t>(slot_numel_) * sizeof(float);
  // The own slot's pages, widened to whole pages: those stay.
  const size_t mapped = (mapping_->bytes + page - 1) / page * page;
  const size_t keep_from = (own_ * slot_bytes) / page * page;
  const size_t keep_to = std::min(mapped, ((own_ + 1) * slot_bytes + page - 1) / page * page);
  if (keep_from > 0 && ::madvise(base, keep_from, MADV_DONTNEED) != 0)
    throw std::runtime_error(std::string("GenerationBuffer: madvise failed: ") + std::strerror(errno));
  if (keep_to < mapped && ::madvise(base + keep_to, mapped - keep_to, MADV_DONTNEED) != 0)
    throw std::runtime_error(std::string("GenerationBuffer: madvise failed: ") + std::strerror(errno));
}

int64_t GenerationBuffer::resident_bytes() const {
  const size_t page = page_size();
  const size_t pages = (mapping_->bytes + page - 1) / page;
  std::vector<unsigned char> resident(pages);
  if (::mincore(mapping_->base, mapping_->bytes, resident.data()) != 0)
    throw std::runtime_error(std::string("GenerationBuffer: mincore failed: ") + std::strerror(errno));
  int64_t count = 0;
  for (unsigned char r : resident) count += r & 1;
  return count * static_cast<int64_t>(page);
}

}  // namespace rlwb::workers::hybrid_engine
