// A short scheduler time slice for the calling thread and every thread it
// starts afterwards (threads inherit it), for the processes of a run: the
// controller and each worker.
//
// Why: a call crosses several threads on its way (the controller's graph
// runner and ZeroMQ I/O thread, the worker's I/O thread and main thread, and
// back), each woken for microseconds. On a host whose cores the worker ranks
// keep busy, Linux's EEVDF scheduler (6.6 on) lets the running task finish
// its slice before a woken one runs -- 1.4 ms on this project's 2-core
// host -- and a step's hops then wait milliseconds for a core. Since 6.12 a
// task may ask for a shorter slice (sched_setattr's sched_runtime, 0.1 to
// 100 ms, no privilege needed); a woken task with a shorter slice than the
// running one takes the core at once, and a task with a short slice is
// protected from preemption for only that long. bench_orchestration
// measures the effect (bench/RESULTS.md). Older kernels accept the request
// and ignore it.
//
// Only a thread under SCHED_OTHER or SCHED_BATCH is changed; its nice value
// and policy stay as they were (a run started under `nice` stays niced).
#pragma once

#include <chrono>

namespace rlwb::core {

// The slice asked for: the shortest the kernel grants.
inline constexpr std::chrono::microseconds kShortSchedulerSlice{100};

// True when the kernel took the request (it may still ignore it: before 6.12).
bool request_short_scheduler_slice();

}  // namespace rlwb::core
