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

GenerationBuffer::GenerationBuffer(int64_t slot_numel, int slots, int own_slot, BufferBacking backing,
                                   const torch::Device& device)
    : backing_(backing), slot_numel_(slot_numel), slots_(slots), own_index_(own_slot) {
  if (slot_numel <= 0 || slots <= 0 || own_slot < 0 || own_slot >= slots)
    throw std::invalid_argument("GenerationBuffer: slot " + std::to_string(own_slot) + " of " +
                                std::to_string(slots) + " slots of " + std::to_string(slot_numel) +
                                " floats is not a buffer; every size must be positive");
  if (backing_ == BufferBacking::kAllocated) {
    own_ = torch::zeros({slot_numel}, torch::TensorOptions().dtype(torch::kFloat32).device(device));
    return;
  }
  if (!device.is_cpu())
    throw std::invalid_argument("GenerationBuffer: a mapped buffer is host memory; on " + device.str() +
                                " use BufferBacking::kAllocated");
  mapping_ = std::make_shared<Mapping>();
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

torch::Tensor GenerationBuffer::mapped_slot(int index) const {
  float* start = static_cast<float*>(mapping_->base) + static_cast<int64_t>(index) * slot_numel_;
  std::shared_ptr<Mapping> keep = mapping_;
  return torch::from_blob(
      start, {slot_numel_}, [keep](void*) mutable { keep.reset(); }, torch::kFloat32);
}

torch::Tensor GenerationBuffer::slot(int index) const {
  if (backing_ == BufferBacking::kMapped) return mapped_slot(index);
  if (index == own_index_) return own_;
  return all_slots().narrow(0, static_cast<int64_t>(index) * slot_numel_, slot_numel_);
}

torch::Tensor GenerationBuffer::own_slot() const { return slot(own_index_); }

torch::Tensor GenerationBuffer::all_slots() const {
  if (backing_ == BufferBacking::kAllocated) {
    if (slots_ == 1) return own_;
    if (!whole_.defined())
      throw std::logic_error(
          "GenerationBuffer: the other slots are not held; call hold_all_slots() before reading them");
    return whole_;
  }
  std::shared_ptr<Mapping> keep = mapping_;
  return torch::from_blob(
      mapping_->base, {slot_numel_ * slots_}, [keep](void*) mutable { keep.reset(); }, torch::kFloat32);
}

void GenerationBuffer::hold_all_slots() {
  if (backing_ == BufferBacking::kMapped || slots_ == 1 || whole_.defined()) return;
  whole_ = torch::empty({slot_numel_ * slots_}, own_.options());
  torch::Tensor place = whole_.narrow(0, static_cast<int64_t>(own_index_) * slot_numel_, slot_numel_);
  place.copy_(own_);
  own_ = place;  // the old own slot goes with its last view
}

void GenerationBuffer::release_other_slots() {
  if (backing_ == BufferBacking::kAllocated) {
    if (!whole_.defined()) return;
    own_ = own_.clone();
    whole_ = torch::Tensor();  // goes with its last view
    return;
  }
  const size_t page = page_size();
  auto* base = static_cast<char*>(mapping_->base);
  const size_t slot_bytes = static_cast<size_t>(slot_numel_) * sizeof(float);
  // The own slot's pages, widened to whole pages: those stay.
  const size_t mapped = (mapping_->bytes + page - 1) / page * page;
  const size_t keep_from = (own_index_ * slot_bytes) / page * page;
  const size_t keep_to = std::min(mapped, ((own_index_ + 1) * slot_bytes + page - 1) / page * page);
  if (keep_from > 0 && ::madvise(base, keep_from, MADV_DONTNEED) != 0)
    throw std::runtime_error(std::string("GenerationBuffer: madvise failed: ") + std::strerror(errno));
  if (keep_to < mapped && ::madvise(base + keep_to, mapped - keep_to, MADV_DONTNEED) != 0)
    throw std::runtime_error(std::string("GenerationBuffer: madvise failed: ") + std::strerror(errno));
}

int64_t GenerationBuffer::resident_bytes() const {
  if (backing_ == BufferBacking::kAllocated)
    return static_cast<int64_t>((whole_.defined() ? whole_ : own_).nbytes());
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
