#include "core/wire/shm_segment.h"

#include <dirent.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cctype>
#include <cerrno>
#include <cstring>
#include <map>
#include <memory>
#include <mutex>
#include <random>
#include <vector>

#include "core/batch/tensor_bits.h"
#include "core/wire/wire.h"

#ifndef MADV_POPULATE_WRITE
#define MADV_POPULATE_WRITE 23
#endif

namespace rlwb::core {

namespace {

using Clock = std::chrono::steady_clock;

// [SECTION] The control block in a segment's first page

constexpr uint64_t kMagic = 0x314d48534257'4c52ULL;  // "RLWBSHM1" little-endian
constexpr size_t kDataOffset = 4096;
constexpr size_t kMinCapacity = size_t{1} << 20;

enum State : uint32_t { kFree = 0, kSent = 1, kClaimed = 2, kRetired = 3 };

// The state word: generation in the high 32 bits, then the claiming
// process's pid (pid_max <= 2^22) and a 2-bit state, so that a claim and
// its owner change in one compare-and-swap.
struct Word {
  uint32_t generation;
  uint32_t pid;
  State state;
};
uint64_t pack(Word w) { return (uint64_t{w.generation} << 32) | (uint64_t{w.pid} << 2) | uint64_t{w.state}; }
Word unpack(uint64_t v) {
  return {static_cast<uint32_t>(v >> 32), static_cast<uint32_t>((v & 0xffffffffu) >> 2),
          static_cast<State>(v & 3u)};
}

struct ControlBlock {
  uint64_t magic;
  uint64_t id;
  uint64_t capacity;  // bytes of the data area, which starts at kDataOffset
  uint64_t word;      // only through state()
  int32_t creator_pid;
  uint32_t dropped;  // set by the sender once it unlinked the segment
};
static_assert(sizeof(ControlBlock) <= kDataOffset);

std::atomic_ref<uint64_t> state(ControlBlock* cb) { return std::atomic_ref<uint64_t>(cb->word); }
std::atomic_ref<uint32_t> dropped(ControlBlock* cb) { return std::atomic_ref<uint32_t>(cb->dropped); }

const char* state_name(State s) {
  switch (s) {
    case kFree:
      return "free";
    case kSent:
      return "sent";
    case kClaimed:
      return "claimed";
    default:
      return "reclaimed";
  }
}

bool process_alive(pid_t pid) { return pid <= 0 || kill(pid, 0) == 0 || errno == EPERM; }

size_t round_up(size_t n, size_t to) { return (n + to - 1) / to * to; }

// Segments of one size class are interchangeable; capacity is only address
// space until written, so powers of two waste no memory.
size_t capacity_class(size_t bytes) {
  size_t c = kMinCapacity;
  while (c < bytes) c <<= 1;
  return c;
}

std::string errno_text() { return std::strerror(errno); }

// Allocates (fallocate reports a full /dev/shm as an error instead of a
// SIGBUS on first write) and faults in [begin, end) of a mapping, in one
// pass instead of one page fault per 4 KiB later.
void prepare_pages(int fd, char* base, size_t begin, size_t end, const std::string& name) {
  if (end <= begin) return;
  if (fd >= 0) {
    int rc = posix_fallocate(fd, static_cast<off_t>(begin), static_cast<off_t>(end - begin));
    if (rc != 0) {
      throw WireError("shared memory: cannot allocate " + std::to_string(end - begin) +
                      " bytes for segment '" + name + "' (" + std::strerror(rc) +
                      "); free space in /dev/shm or raise WireOptions::shm_threshold_bytes");
    }
  }
  size_t page_begin = begin / 4096 * 4096;
  // Best effort: on kernels without MADV_POPULATE_WRITE pages fault lazily.
  (void)madvise(base + page_begin, round_up(end, 4096) - page_begin, MADV_POPULATE_WRITE);
}

struct ShmConfig {
  std::atomic<size_t> sender_cache_bytes{ShmSettings{}.sender_cache_bytes};
  std::atomic<size_t> receiver_cache_bytes{ShmSettings{}.receiver_cache_bytes};
  std::atomic<int64_t> unclaimed_timeout_ms{ShmSettings{}.unclaimed_timeout.count()};
};
ShmConfig g_config;

// A process-wide object that a forked child must not inherit (its mutex may
// be held by a thread that does not exist in the child): each process gets
// its own, the parent's copy is left alone.
template <typename T>
T& per_process(std::atomic<T*>& slot) {
  T* p = slot.load(std::memory_order_acquire);
  if (p != nullptr && p->owner == getpid()) return *p;
  auto* fresh = new T();  // never deleted: tensors may outlive static destruction
  if (slot.compare_exchange_strong(p, fresh, std::memory_order_acq_rel)) return *fresh;
  delete fresh;
  return *slot.load(std::memory_order_acquire);
}

// [SECTION] Sender: the pool of segments this process created

struct Segment {
  std::string name;
  size_t capacity = 0;
  char* base = nullptr;
  size_t length = 0;
  int fd = -1;  // kept for fallocate when a reuse needs more pages
  ControlBlock* cb = nullptr;
  size_t prepared = 0;  // data bytes allocated and faulted in
  uint32_t generation = 0;
  bool writing = false;  // between acquire and published/abandon: never swept
  Clock::time_point last_change;
};

class SenderPool {
 public:
  const pid_t owner = getpid();

  SenderPool() {
    std::random_device rd;
    rng_.seed((uint64_t{rd()} << 32) ^ rd() ^ static_cast<uint64_t>(owner));
    nonce_ = static_cast<uint32_t>(rng_());
    shm_reap_orphans();
  }

  // A segment of at least `bytes`, already moved to SENT with a new
  // generation, and with `bytes` of pages prepared.
  Segment* acquire(size_t bytes) {
    const size_t capacity = capacity_class(bytes);
    Segment* seg = nullptr;
    {
      std::lock_guard lock(mu_);
      sweep_locked();
      for (auto& s : segments_) {
        if (s->capacity != capacity) continue;
        uint64_t expected = pack({s->generation, 0, kFree});
        if (state(s->cb).compare_exchange_strong(expected, pack({s->generation + 1, 0, kSent}))) {
          seg = s.get();
          ++seg->generation;
          seg->writing = true;
          ++reused_;
          break;
        }
      }
    }
    if (seg == nullptr) {
      std::unique_ptr<Segment> fresh = create(capacity);
      seg = fresh.get();
      std::lock_guard lock(mu_);
      segments_.push_back(std::move(fresh));
      ++created_;
    }
    if (seg->prepared < bytes) {
      try {
        prepare_pages(seg->fd, seg->base, kDataOffset + seg->prepared, kDataOffset + bytes, seg->name);
      } catch (...) {
        abandon(seg);
        throw;
      }
      seg->prepared = bytes;
    }
    return seg;
  }

  // The copy is done and the descriptor about to be sent: from now on the
  // unclaimed timeout runs.
  ShmDescriptor published(Segment* seg) {
    std::lock_guard lock(mu_);
    seg->writing = false;
    seg->last_change = Clock::now();
    return {seg->name, seg->cb->id, seg->generation};
  }

  // Undoes acquire when the copy failed: the segment was never sent.
  void abandon(Segment* seg) {
    std::lock_guard lock(mu_);
    seg->writing = false;
    seg->last_change = Clock::now();
    state(seg->cb).store(pack({seg->generation, 0, kFree}), std::memory_order_release);
  }

  void withdraw(const ShmDescriptor& d) {
    std::lock_guard lock(mu_);
    for (auto& s : segments_) {
      if (s->name != d.name) continue;
      uint64_t expected = pack({d.generation, 0, kSent});
      state(s->cb).compare_exchange_strong(expected, pack({d.generation, 0, kFree}));
    }
  }

  size_t trim() {
    std::lock_guard lock(mu_);
    sweep_locked();
    size_t n = 0;
    for (size_t i = 0; i < segments_.size();) {
      Segment& s = *segments_[i];
      uint64_t expected = pack({s.generation, 0, kFree});
      if (state(s.cb).compare_exchange_strong(expected, pack({s.generation, 0, kRetired}))) {
        drop_locked(i);
        ++n;
      } else {
        ++i;
      }
    }
    return n;
  }

  // At exit: unlink every name so that nothing stays in /dev/shm. Mappings
  // a receiver holds stay valid; unclaimed messages become WireErrors.
  void unlink_all() {
    std::lock_guard lock(mu_);
    for (auto& s : segments_) {
      dropped(s->cb).store(1, std::memory_order_release);
      shm_unlink(s->name.c_str());
    }
  }

  void add_stats(ShmStats& st) {
    std::lock_guard lock(mu_);
    st.sender_segments = segments_.size();
    for (auto& s : segments_) {
      State now = unpack(state(s->cb).load()).state;
      if (now == kSent || now == kClaimed) ++st.sender_in_flight;
    }
    st.sender_created = created_;
    st.sender_reused = reused_;
    st.sender_reclaimed = reclaimed_;
  }

 private:
  std::unique_ptr<Segment> create(size_t capacity) {
    auto seg = std::make_unique<Segment>();
    uint64_t id;
    {
      std::lock_guard lock(mu_);
      seg->name = shm_name_prefix() + std::to_string(nonce_) + "-" + std::to_string(seq_++);
      id = rng_();
    }
    seg->capacity = capacity;
    seg->length = kDataOffset + capacity;
    seg->fd = shm_open(seg->name.c_str(), O_CREAT | O_EXCL | O_RDWR, 0600);
    if (seg->fd < 0) {
      throw WireError("shared memory: cannot create segment '" + seg->name + "': " + errno_text() +
                      "; is /dev/shm mounted and writable?");
    }
    auto fail = [&](const std::string& what) {
      std::string why = errno_text();
      if (seg->base != nullptr) munmap(seg->base, seg->length);
      close(seg->fd);
      shm_unlink(seg->name.c_str());
      throw WireError("shared memory: cannot " + what + " segment '" + seg->name + "' (" +
                      std::to_string(seg->length) + " bytes): " + why);
    };
    if (ftruncate(seg->fd, static_cast<off_t>(seg->length)) != 0) fail("size");
    void* p = mmap(nullptr, seg->length, PROT_READ | PROT_WRITE, MAP_SHARED, seg->fd, 0);
    if (p == MAP_FAILED) fail("map");
    seg->base = static_cast<char*>(p);
    if (int rc = posix_fallocate(seg->fd, 0, kDataOffset); rc != 0) {
      errno = rc;
      fail("allocate the control page of");
    }
    seg->cb = reinterpret_cast<ControlBlock*>(seg->base);
    seg->cb->id = id;
    seg->cb->capacity = capacity;
    seg->cb->creator_pid = static_cast<int32_t>(owner);
    seg->cb->dropped = 0;
    seg->generation = 1;
    seg->writing = true;
    state(seg->cb).store(pack({1, 0, kSent}), std::memory_order_relaxed);
    std::atomic_ref<uint64_t>(seg->cb->magic).store(kMagic, std::memory_order_release);
    seg->last_change = Clock::now();
    return seg;
  }

  void drop_locked(size_t index) {
    Segment& s = *segments_[index];
    dropped(s.cb).store(1, std::memory_order_release);
    shm_unlink(s.name.c_str());
    munmap(s.base, s.length);
    close(s.fd);
    segments_.erase(segments_.begin() + static_cast<std::ptrdiff_t>(index));
  }

  // Reclaims segments nobody will return (see the header), then trims idle
  // ones beyond the cache budget, least recently used first.
  void sweep_locked() {
    const auto now = Clock::now();
    const auto timeout = std::chrono::milliseconds(g_config.unclaimed_timeout_ms.load());
    for (size_t i = 0; i < segments_.size();) {
      Segment& s = *segments_[i];
      if (s.writing) {
        ++i;
        continue;
      }
      uint64_t v = state(s.cb).load(std::memory_order_acquire);
      Word w = unpack(v);
      bool lost = (w.state == kSent && timeout.count() > 0 && now - s.last_change > timeout) ||
                  (w.state == kClaimed && !process_alive(static_cast<pid_t>(w.pid)));
      if (lost && state(s.cb).compare_exchange_strong(v, pack({w.generation, 0, kRetired}))) {
        drop_locked(i);
        ++reclaimed_;
      } else {
        ++i;
      }
    }
    size_t idle = 0;
    for (auto& s : segments_) {
      if (unpack(state(s->cb).load()).state == kFree) idle += s->prepared;
    }
    const size_t budget = g_config.sender_cache_bytes.load();
    while (idle > budget) {
      size_t oldest = segments_.size();
      for (size_t i = 0; i < segments_.size(); ++i) {
        if (unpack(state(segments_[i]->cb).load()).state != kFree) continue;
        if (oldest == segments_.size() || segments_[i]->last_change < segments_[oldest]->last_change) {
          oldest = i;
        }
      }
      if (oldest == segments_.size()) break;
      Segment& s = *segments_[oldest];
      uint64_t expected = pack({s.generation, 0, kFree});
      if (!state(s.cb).compare_exchange_strong(expected, pack({s.generation, 0, kRetired}))) break;
      idle -= s.prepared;
      drop_locked(oldest);
    }
  }

  std::mutex mu_;
  std::vector<std::unique_ptr<Segment>> segments_;
  std::mt19937_64 rng_;
  uint32_t nonce_ = 0;
  uint64_t seq_ = 0;
  size_t created_ = 0, reused_ = 0, reclaimed_ = 0;
};

std::atomic<SenderPool*> g_sender_pool{nullptr};
SenderPool& sender_pool() { return per_process(g_sender_pool); }

// Unlinks this process's segments at a normal exit (not in a forked child
// that exits: the pool there belongs to the parent).
struct UnlinkAtExit {
  ~UnlinkAtExit() {
    SenderPool* p = g_sender_pool.load();
    if (p != nullptr && p->owner == getpid()) p->unlink_all();
  }
} g_unlink_at_exit;

// [SECTION] Receiver: mappings of other processes' segments

struct Mapping {
  std::string name;
  uint64_t id = 0;
  char* base = nullptr;
  size_t length = 0;
  ControlBlock* cb = nullptr;
  size_t populated = 0;
  int refs = 0;
  bool in_cache = true;
  Clock::time_point last_used;
};

class ReceiverCache {
 public:
  const pid_t owner = getpid();

  torch::Tensor claim(const ShmDescriptor& d, torch::IntArrayRef sizes, torch::ScalarType dtype,
                      size_t bytes) {
    std::shared_ptr<Mapping> m;
    {
      std::lock_guard lock(mu_);
      sweep_locked();
      m = find_or_map_locked(d);
      if (bytes > m->cb->capacity) {
        throw WireError("shared memory: segment '" + d.name + "' holds " + std::to_string(m->cb->capacity) +
                        " bytes but the header claims " + std::to_string(bytes));
      }
      if (m->populated < bytes) {
        prepare_pages(-1, m->base, kDataOffset + m->populated, kDataOffset + bytes, d.name);
        m->populated = bytes;
      }
      uint64_t expected = pack({d.generation, 0, kSent});
      const uint64_t mine = pack({d.generation, static_cast<uint32_t>(owner), kClaimed});
      if (!state(m->cb).compare_exchange_strong(expected, mine, std::memory_order_acq_rel)) {
        Word now = unpack(expected);
        if (now.state == kRetired && now.generation == d.generation) {
          throw WireError("shared memory: segment '" + d.name +
                          "' was reclaimed by its sender because the message was not received "
                          "within the unclaimed timeout (ShmSettings::unclaimed_timeout)");
        }
        throw WireError("shared memory: segment '" + d.name + "' generation " + std::to_string(d.generation) +
                        " is no longer waiting (now generation " + std::to_string(now.generation) + ", " +
                        state_name(now.state) +
                        "): a message carrying shared memory can be decoded only once");
      }
      ++m->refs;
    }
    const uint32_t generation = d.generation;
    return torch::from_blob(
        m->base + kDataOffset, sizes, [this, m, generation](void*) { release(m, generation); },
        torch::TensorOptions().dtype(dtype));
  }

  void release(const std::shared_ptr<Mapping>& m, uint32_t generation) {
    uint64_t expected = pack({generation, static_cast<uint32_t>(owner), kClaimed});
    state(m->cb).compare_exchange_strong(expected, pack({generation, 0, kFree}), std::memory_order_acq_rel);
    std::lock_guard lock(mu_);
    --m->refs;
    m->last_used = Clock::now();
    if (m->refs == 0 && !m->in_cache) unmap(*m);
    sweep_locked();
  }

  size_t trim() {
    std::lock_guard lock(mu_);
    size_t n = 0;
    for (auto it = cache_.begin(); it != cache_.end();) {
      if (it->second->refs == 0) {
        unmap(*it->second);
        it = cache_.erase(it);
        ++n;
      } else {
        ++it;
      }
    }
    return n;
  }

  void add_stats(ShmStats& st) {
    std::lock_guard lock(mu_);
    st.receiver_mappings = cache_.size();
    st.receiver_maps = maps_;
  }

 private:
  std::shared_ptr<Mapping> find_or_map_locked(const ShmDescriptor& d) {
    if (auto it = cache_.find(d.name); it != cache_.end()) {
      if (it->second->id == d.id) return it->second;
      // Same name, other segment (the old one was unlinked): forget the old.
      it->second->in_cache = false;
      if (it->second->refs == 0) unmap(*it->second);
      cache_.erase(it);
    }
    int fd = shm_open(d.name.c_str(), O_RDWR, 0);
    if (fd < 0) {
      if (errno == ENOENT) {
        throw WireError("shared memory: segment '" + d.name +
                        "' does not exist: its sender exited or reclaimed it, or the sender is on "
                        "another host (use shm_threshold_bytes = 0 across hosts)");
      }
      throw WireError("shared memory: cannot open segment '" + d.name + "': " + errno_text());
    }
    struct stat st {};
    if (fstat(fd, &st) != 0 || static_cast<size_t>(st.st_size) < kDataOffset) {
      close(fd);
      throw WireError("shared memory: segment '" + d.name + "' is too small to be an RLWB segment");
    }
    const size_t length = static_cast<size_t>(st.st_size);
    void* p = mmap(nullptr, length, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    const std::string why = errno_text();
    close(fd);
    if (p == MAP_FAILED) {
      throw WireError("shared memory: cannot map segment '" + d.name + "': " + why);
    }
    auto m = std::make_shared<Mapping>();
    m->name = d.name;
    m->base = static_cast<char*>(p);
    m->length = length;
    m->cb = reinterpret_cast<ControlBlock*>(p);
    ++maps_;
    const uint64_t magic = std::atomic_ref<uint64_t>(m->cb->magic).load(std::memory_order_acquire);
    std::string bad;
    if (magic != kMagic) {
      bad = "has no RLWB control block";
    } else if (m->cb->id != d.id) {
      bad = "has id " + std::to_string(m->cb->id) + ", the message expects " + std::to_string(d.id) +
            " (a stale message)";
    } else if (kDataOffset + m->cb->capacity > length) {
      bad = "is shorter than its control block says";
    }
    if (!bad.empty()) {
      unmap(*m);
      throw WireError("shared memory: segment '" + d.name + "' " + bad);
    }
    m->id = d.id;
    cache_[d.name] = m;
    return m;
  }

  void unmap(Mapping& m) {
    if (m.base != nullptr) munmap(m.base, m.length);
    m.base = nullptr;
  }

  // Forgets idle mappings whose sender is gone, then keeps the idle rest
  // within the budget, least recently used first.
  void sweep_locked() {
    size_t idle = 0;
    for (auto it = cache_.begin(); it != cache_.end();) {
      Mapping& m = *it->second;
      if (m.refs == 0 &&
          (dropped(m.cb).load(std::memory_order_acquire) != 0 || !process_alive(m.cb->creator_pid))) {
        unmap(m);
        it = cache_.erase(it);
        continue;
      }
      if (m.refs == 0) idle += m.populated;
      ++it;
    }
    const size_t budget = g_config.receiver_cache_bytes.load();
    while (idle > budget) {
      auto oldest = cache_.end();
      for (auto it = cache_.begin(); it != cache_.end(); ++it) {
        if (it->second->refs == 0 &&
            (oldest == cache_.end() || it->second->last_used < oldest->second->last_used)) {
          oldest = it;
        }
      }
      if (oldest == cache_.end()) break;
      idle -= oldest->second->populated;
      unmap(*oldest->second);
      cache_.erase(oldest);
    }
  }

  std::mutex mu_;
  std::map<std::string, std::shared_ptr<Mapping>> cache_;
  size_t maps_ = 0;
};

std::atomic<ReceiverCache*> g_receiver_cache{nullptr};
ReceiverCache& receiver_cache() { return per_process(g_receiver_cache); }

bool valid_segment_name(const std::string& name) {
  const std::string prefix = "/rlwb-";
  if (name.size() <= prefix.size() || name.size() > 100 || name.rfind(prefix, 0) != 0) return false;
  return std::all_of(name.begin() + 1, name.end(),
                     [](char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '-'; });
}

}  // namespace

// [SECTION] Public functions

void set_shm_settings(const ShmSettings& s) {
  g_config.sender_cache_bytes = s.sender_cache_bytes;
  g_config.receiver_cache_bytes = s.receiver_cache_bytes;
  g_config.unclaimed_timeout_ms = s.unclaimed_timeout.count();
}

ShmSettings shm_settings() {
  ShmSettings s;
  s.sender_cache_bytes = g_config.sender_cache_bytes;
  s.receiver_cache_bytes = g_config.receiver_cache_bytes;
  s.unclaimed_timeout = std::chrono::milliseconds(g_config.unclaimed_timeout_ms.load());
  return s;
}

ShmDescriptor shm_publish(const torch::Tensor& t) {
  const size_t bytes = static_cast<size_t>(t.numel()) * t.element_size();
  if (bytes == 0) throw WireError("shared memory: an empty tensor has nothing to publish");
  SenderPool& pool = sender_pool();
  Segment* seg = pool.acquire(bytes);
  try {
    char* dst = seg->base + kDataOffset;
    if (t.device().is_cpu() && t.is_contiguous() && !t.is_conj() && !t.is_neg()) {
      std::memcpy(dst, t.data_ptr(), bytes);
    } else {  // one strided (or device-to-host) copy straight into the segment
      torch::Tensor bits = bits_view(t);
      torch::from_blob(dst, t.sizes(), torch::TensorOptions().dtype(bits.scalar_type())).copy_(bits);
    }
  } catch (...) {
    pool.abandon(seg);
    throw;
  }
  return pool.published(seg);
}

void shm_withdraw(const ShmDescriptor& descriptor) { sender_pool().withdraw(descriptor); }

torch::Tensor shm_claim(const ShmDescriptor& descriptor, torch::IntArrayRef sizes, torch::ScalarType dtype,
                        size_t bytes) {
  if (!valid_segment_name(descriptor.name)) {
    throw WireError("shared memory: '" + descriptor.name.substr(0, 120) +
                    "' is not an RLWB segment name (expected /rlwb-<pid>-...)");
  }
  return receiver_cache().claim(descriptor, sizes, dtype, bytes);
}

ShmStats shm_stats() {
  ShmStats st;
  sender_pool().add_stats(st);
  receiver_cache().add_stats(st);
  return st;
}

size_t shm_trim() {
  size_t n = sender_pool().trim();
  receiver_cache().trim();
  return n;
}

size_t shm_reap_orphans() {
  DIR* dir = opendir("/dev/shm");
  if (dir == nullptr) return 0;
  size_t n = 0;
  while (dirent* e = readdir(dir)) {
    std::string entry = e->d_name;
    if (entry.rfind("rlwb-", 0) != 0) continue;
    char* end = nullptr;
    long pid = std::strtol(entry.c_str() + 5, &end, 10);
    if (pid <= 0 || end == nullptr || *end != '-') continue;
    if (kill(static_cast<pid_t>(pid), 0) == -1 && errno == ESRCH) {
      if (shm_unlink(("/" + entry).c_str()) == 0) ++n;
    }
  }
  closedir(dir);
  return n;
}

std::string shm_name_prefix() { return "/rlwb-" + std::to_string(getpid()) + "-"; }

}  // namespace rlwb::core
