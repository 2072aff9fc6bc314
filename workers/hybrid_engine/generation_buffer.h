// GenerationBuffer: the memory of one split parameter in both layouts of
// the 3D-HybridEngine (hybrid_engine.h). It is the parameter's generation
// shard -- `slots` training shards of equal size side by side, the ones of
// a micro-DP group in slot order -- of which only this rank's own slot is
// backed by memory while training:
//
//   training    [ .... | own | .... ]   only `own` resident
//   generation  [ s0   | own | s2   ]   every slot resident, filled by the
//                                       micro-DP group's all-gather
//
// The training parameter is a view of the own slot in both modes, so
// switching to generation neither moves nor copies it, and switching back
// returns the other slots' pages to the system (madvise MADV_DONTNEED).
// That is why the buffer is an anonymous mapping of its own rather than a
// torch allocation: part of a torch storage cannot be freed.
//
// Slots sit back to back (no padding), so a dimension-0 split of the
// parameter's shards is the generation shard as one contiguous tensor. The
// pages that straddle the own slot's ends stay resident with it: at most
// two pages more than the shard.
//
// Tensors from own_slot() and all_slots() keep the mapping alive; they are
// float32 on the CPU.
#pragma once

#include <torch/types.h>

#include <cstdint>
#include <memory>

namespace rlwb::workers::hybrid_engine {

class GenerationBuffer {
 public:
  // Reserves slots * slot_numel floats of address space (no memory yet)
  // and backs the own slot. Throws std::runtime_error when the mapping fails.
  GenerationBuffer(int64_t slot_numel, int slots, int own_slot);

  int slots() const { return slots_; }
  int own_slot_index() const { return own_; }
  int64_t slot_numel() const { return slot_numel_; }

  // [slot_numel]: where the training shard lives.
  torch::Tensor own_slot() const;
  // [slots * slot_numel]: the generation shard (read only while generating).
  torch::Tensor all_slots() const;
  torch::Tensor slot(int index) const;

  // Gives the pages of the other slots back (their contents become zeros).
  void release_other_slots();

  // Bytes of this buffer backed by memory now (mincore), in whole pages.
  int64_t resident_bytes() const;

 private:
  struct Mapping;
  std::shared_ptr<Mapping> mapping_;
  int64_t slot_numel_;
  int slots_, own_;
};

}  // namespace rlwb::workers::hybrid_engine
