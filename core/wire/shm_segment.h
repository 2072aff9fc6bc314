// Shared-memory transport of the wire codec: moves a tensor's bytes between
// two processes on one host through a POSIX shared-memory segment, so that
// ZeroMQ carries only a small descriptor (segment name, id, generation).
// wire.cpp uses it for tensors >= WireOptions::shm_threshold_bytes; the RPC
// layer only tunes it (ShmSettings) and cleans up (shm_reap_orphans).
//
// Lifecycle of a segment (one segment holds one tensor of one message):
//   sender   shm_publish: takes a FREE segment of the right size class from
//            this process's pool (or creates one: shm_open + ftruncate),
//            copies the tensor in (the one copy of this path) -> SENT.
//   receiver shm_claim: maps the segment (or reuses its cached mapping),
//            checks id and generation, SENT -> CLAIMED, and wraps the bytes
//            in a tensor without copying. The tensor's deleter sets FREE.
//   sender   reuses a FREE segment for a later message: its pages are
//            already faulted in on both sides, which is what makes this path
//            run near memcpy speed (fresh tmpfs pages cost a page fault each,
//            ~2 us per 4 KiB page on a VM: more than the copy itself).
// A segment's first page is a control block (magic, id, state word); the
// state moves only by atomic compare-and-swap in the shared page.
//
// Cleanup, and what happens when the receiver never receives:
//   - Idle (FREE) segments stay in /dev/shm as a bounded cache
//     (ShmSettings::sender_cache_bytes); shm_trim() or process exit unlinks
//     them. A normal exit unlinks every segment the process created.
//   - A segment SENT but never claimed (message dropped, receiver died
//     first) is reclaimed after ShmSettings::unclaimed_timeout: the sender
//     marks it RETIRED and unlinks it. A receiver that tries it later gets a
//     WireError saying so; it never reads reused memory.
//   - A segment CLAIMED by a process that has since died is reclaimed.
//   - A sender killed by a signal cannot clean up: its segments stay in
//     /dev/shm until shm_reap_orphans() runs (it runs automatically when a
//     process first sends through shared memory): it unlinks /dev/shm/rlwb-<pid>-*
//     of every pid that no longer exists. (Processes in another pid
//     namespace that share /dev/shm look dead to it: don't share /dev/shm
//     across pid namespaces.)
//   - Receivers keep idle mappings for reuse (receiver_cache_bytes) and drop
//     those whose sender unlinked them or died.
//   There is no background thread: the sender's checks run inside
//   shm_publish and shm_trim, the receiver's inside shm_claim and release.
// Trust: both processes are RLWB processes of one user on one host. A peer
// that shrinks a segment under a mapping can still crash the other with
// SIGBUS; names are validated so a message cannot open arbitrary files.
#pragma once

#include <torch/types.h>

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <string>

namespace rlwb::core {

struct ShmDescriptor {
  std::string name;         // "/rlwb-<pid>-<nonce>-<seq>"
  uint64_t id = 0;          // random, fixed for the segment's life
  uint32_t generation = 0;  // bumped on every reuse by the sender
};

struct ShmSettings {
  // Idle segments the sender keeps for reuse, in bytes written (pages
  // faulted). Beyond it the least recently used idle ones are unlinked.
  size_t sender_cache_bytes = size_t{1} << 30;
  // Idle mappings a receiver keeps so that reuse costs no mmap and no page
  // faults (bytes faulted in). The pages are the sender's segments, so these
  // hold no memory of their own while the sender keeps the segments.
  size_t receiver_cache_bytes = size_t{1} << 30;
  // A SENT segment not claimed within this time is reclaimed by the sender
  // (see above). Zero: never.
  std::chrono::milliseconds unclaimed_timeout = std::chrono::minutes(30);
};

void set_shm_settings(const ShmSettings& settings);
ShmSettings shm_settings();

// Sender: copies `t` (any device, any strides, any dtype, at least one
// byte) into a pool segment and returns what the receiver needs. Throws
// WireError when shared memory is unavailable (e.g. /dev/shm full).
ShmDescriptor shm_publish(const torch::Tensor& t);

// Sender: returns a published segment to the pool when its message will
// not be sent after all (it was not claimed yet). No-op otherwise.
void shm_withdraw(const ShmDescriptor& descriptor);

// Receiver: maps the segment and returns a CPU tensor of `sizes`/`dtype`
// over its bytes (no copy); destroying the last reference returns the
// segment to the sender. `bytes` must equal numel * element size. Throws
// WireError for a bad name, a missing/reclaimed/already claimed segment,
// or a segment smaller than `bytes`.
torch::Tensor shm_claim(const ShmDescriptor& descriptor, torch::IntArrayRef sizes, torch::ScalarType dtype,
                        size_t bytes);

struct ShmStats {
  size_t sender_segments = 0;    // in this process's pool, any state
  size_t sender_in_flight = 0;   // SENT or CLAIMED
  size_t sender_created = 0;     // segments created since start
  size_t sender_reused = 0;      // publishes served by an existing segment
  size_t sender_reclaimed = 0;   // unclaimed or orphaned segments reclaimed
  size_t receiver_mappings = 0;  // mappings held (in use or cached)
  size_t receiver_maps = 0;      // mmap calls since start
};
ShmStats shm_stats();

// Reclaims what the sender's sweep would (unclaimed past the timeout,
// claimed by dead processes), then unlinks every idle segment of this
// process's pool and unmaps every idle receiver mapping. Returns the number
// of idle segments unlinked.
size_t shm_trim();

// Unlinks /dev/shm/rlwb-<pid>-* left by processes that no longer exist.
// Returns the number unlinked.
size_t shm_reap_orphans();

// The prefix of every segment name this process creates ("/rlwb-<pid>-"),
// for tests and tools that look in /dev/shm.
std::string shm_name_prefix();

}  // namespace rlwb::core
