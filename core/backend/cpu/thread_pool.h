#pragma once
// The CPU backend's thread pool: one per process, shared by every CpuBackend.
//
// parallel_for(threads, n, f) runs f(0) ... f(n-1) on at most `threads` threads, the caller included,
// and returns when all have run. Chunks are claimed one at a time (dynamic scheduling), so a thread
// that the scheduler takes away (the GUI thread replotting, another process) delays the call by at
// most the chunk it is running, not by its whole static share. Results never depend on which thread
// ran a chunk: callers give each chunk its own output (or its own partial sum, reduced in chunk
// order afterwards), so a run is bitwise reproducible for a given chunking, and the backend chooses
// chunkings that depend on shapes only, not on the thread count.
//
// Waiting: a thread without work spins briefly (pause instructions, then sched_yield so another
// thread of the process can have the core), then sleeps on a futex. OpenMP's default spins for
// ~300,000 iterations at every barrier, which is what cost GUI runs 5-7 % on two cores
// (docs/benchmarks.md). Environment, for experiments: HEADROOM_CPU_SPIN_US (worker spin before
// sleeping, default 200), HEADROOM_CPU_JOIN_SPIN_US (caller spin at the end of a call, default 50).
//
// Nested calls (f calling parallel_for) and calls from a second thread while the pool is busy run
// serially on the calling thread (same results).
#include <cstdint>
#include <type_traits>
#include <utility>

namespace hr::cpu {

// slot: which of the call's threads runs the chunk, in [0, thread_slots(threads)): for per-thread scratch
// buffers (never for results, which must not depend on it).
using ChunkFn = void (*)(void* ctx, std::int64_t chunk, int slot);

// The most threads one call uses (the pool has at most kMaxThreads - 1 workers).
constexpr int kMaxThreads = 33;
inline int thread_slots(int threads) { return threads < 1 ? 1 : threads > kMaxThreads ? kMaxThreads : threads; }

// Runs fn(ctx, c, slot) for c in [0, n) (see above). threads <= 1 or n <= 1 runs inline (slot 0).
void parallel_run(int threads, std::int64_t n, ChunkFn fn, void* ctx);

// f(chunk)
template <class F>
void parallel_for(int threads, std::int64_t n, F&& f) {
    using Fn = std::remove_reference_t<F>;
    parallel_run(threads, n, [](void* ctx, std::int64_t c, int) { (*static_cast<Fn*>(ctx))(c); },
                 const_cast<void*>(static_cast<const void*>(&f)));
}

// f(chunk, slot)
template <class F>
void parallel_for_slots(int threads, std::int64_t n, F&& f) {
    using Fn = std::remove_reference_t<F>;
    parallel_run(threads, n, [](void* ctx, std::int64_t c, int slot) { (*static_cast<Fn*>(ctx))(c, slot); },
                 const_cast<void*>(static_cast<const void*>(&f)));
}

// Worker threads the pool has started so far (for tests and diagnostics).
int pool_workers();

// Foreground work: a thread outside the pool that needs a core now (the GUI thread between waking up
// and going idle again: replots, painting, the run store). While at least one such thread says so and
// the calls' threads plus those threads exceed the CPUs this process may run on, parallel_run uses
// fewer threads (at least 1: on 2 CPUs with a GUI at work, the caller alone) and the idle workers
// sleep at once instead of spinning. Without this, three runnable threads on two cores preempt each
// other at random and a worker preempted in the middle of a chunk stalls the whole call for a time
// slice (docs/benchmarks.md, `scripts/bench gui`). Results do not change (chunkings do not depend on
// the thread count). A foreground thread busy for more than 25 ms on end is no longer yielded to: it
// is more likely blocked outside its event loop, or slowed by other processes, than drawing (a quiet
// window replots its four charts in about 10 ms); HEADROOM_CPU_GUI_HOLD_MS changes the 25.
// Off by default (measured slower on a quiet 2-core machine, docs/benchmarks.md):
// HEADROOM_CPU_YIELD_TO_GUI=1 in the environment turns it on.
// Calls nest (a counter); cheap (atomic operations and a clock read), so a GUI can call them at every
// wake-up.
void foreground_begin();
void foreground_end();
// Threads a call asking for `threads` would use now (tests, diagnostics).
int effective_threads(int threads);
// The CPUs this process may run on (sched_getaffinity), read once.
int available_cpus();

}  // namespace hr::cpu
