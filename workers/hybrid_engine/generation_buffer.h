// GenerationBuffer: the memory of one split parameter in both layouts of
// the 3D-HybridEngine (hybrid_engine.h). It is the parameter's generation
// shard -- `slots` training shards of equal size side by side, the ones of
// a micro-DP group in slot order -- of which only this rank's own slot is
// backed by memory while training:
//
//   training    [ .... | own | .... ]   only `own` held
//   generation  [ s0   | own | s2   ]   every slot held, filled by the
//                                       micro-DP group's all-gather
//
// Slots sit back to back (no padding), so a dimension-0 split of the
// parameter's shards is the generation shard as one contiguous tensor.
// The training parameter is a view of own_slot(); two backings keep it so:
//
//   kMapped     (CPU) an anonymous mapping of the whole shard, of which
//               only the own slot's pages are touched while training.
//               Switching to generation neither moves nor copies the own
//               slot, and switching back returns the other slots' pages
//               to the system (madvise MADV_DONTNEED) -- which is why it
//               is a mapping of its own rather than a torch allocation:
//               part of a torch storage cannot be freed. The pages that
//               straddle the own slot's ends stay resident with it: at
//               most two pages more than the shard.
//   kAllocated  (any device; a GPU's memory cannot be given back a page
//               at a time through torch) the own slot is a tensor of its
//               own while training; hold_all_slots() allocates the whole
//               shard, copies the own slot into its place and drops the
//               old one, and release_other_slots() does the reverse. The
//               own slot MOVES at both switches: whoever views it (the
//               engine's training parameter) must view own_slot() again.
//               One parameter's shard is held twice only during its copy.
//
// Tensors from own_slot(), slot() and all_slots() keep the memory alive;
// they are float32, on the CPU (kMapped) or on the buffer's device.
#pragma once

#include <torch/types.h>

#include <cstdint>
#include <memory>

namespace rlwb::workers::hybrid_engine {

enum class BufferBacking { kMapped, kAllocated };

class GenerationBuffer {
 public:
  // kMapped: reserves slots * slot_numel floats of address space (no
  // memory yet; throws std::runtime_error when the mapping fails), on the
  // CPU only. kAllocated: allocates the own slot on `device`. Throws
  // std::invalid_argument for a size below one, an own slot outside the
  // slots, or kMapped off the CPU.
  GenerationBuffer(int64_t slot_numel, int slots, int own_slot,
                   BufferBacking backing = BufferBacking::kMapped, const torch::Device& device = torch::kCPU);

  int slots() const { return slots_; }
  int own_slot_index() const { return own_index_; }
  int64_t slot_numel() const { return slot_numel_; }

  BufferBacking backing() const { return backing_; }

  // [slot_numel]: where the training shard lives (kAllocated: moves at
  // hold_all_slots() and release_other_slots()).
  torch::Tensor own_slot() const;
  // Memory for every slot, the own one's contents kept. kMapped: nothing
  // to do (the pages come as the gather writes them). Idempotent.
  void hold_all_slots();
  // [slots * slot_numel]: the generation shard. Between hold_all_slots()
  // and release_other_slots() (kMapped: always; the other slots read as
  // zeros while not held); kAllocated throws std::logic_error otherwise,
  // and so does slot() of another slot than the own.
  torch::Tensor all_slots() const;
  torch::Tensor slot(int index) const;

  // Gives the memory of the other slots back (kMapped: their contents
  // become zeros). Idempotent.
  void release_other_slots();

  // Bytes of this buffer backed by memory now: kMapped the resident pages
  // (mincore), kAllocated the tensors held.
  int64_t resident_bytes() const;

 private:
  struct Mapping;
  torch::Tensor mapped_slot(int index) const;

  BufferBacking backing_;
  std::shared_ptr<Mapping> mapping_;  // kMapped
  torch::Tensor own_, whole_;         // kAllocated: own_ a view of whole_ while held
  int64_t slot_numel_;
  int slots_, own_index_;
};

}  // namespace rlwb::workers::hybrid_engine
