// The CPU backend's thread pool (thread_pool.h says what it promises).
//
// One job at a time. The job's shared state is one 64-bit word:
//   bits  0-31  slots in use by workers inside the job (bit i: slot i + 1; the caller is slot 0);
//               a worker inside the job reads the job's fields
//   bits 32-38  limit: how many workers may join (the call's threads - 1)
//   bit  39     closed: set by the caller once every chunk has been claimed; no more joins
//   bits 40-63  generation of the job (wraps; only compared for equality)
// A worker joins with a compare-and-swap on that word that takes the lowest free slot, so it reads
// the job's fields only while the caller is guaranteed not to overwrite them (the caller waits until
// no slot is in use before it posts the next job). Chunks are claimed from a separate counter; `done`
// counts finished chunks, and the caller returns when done == n, whichever threads ran them.
#include "backend/cpu/thread_pool.h"

#include <linux/futex.h>
#include <pthread.h>
#include <sched.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <climits>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <mutex>
#include <thread>
#include <vector>

#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
#define HR_CPU_RELAX() _mm_pause()
#else
#define HR_CPU_RELAX() std::atomic_signal_fence(std::memory_order_seq_cst)
#endif

namespace hr::cpu {

namespace {

using Clock = std::chrono::steady_clock;

constexpr std::uint64_t kSlotMask = 0xFFFFFFFFull;
constexpr int kLimitShift = 32;
constexpr std::uint64_t kClosed = 1ull << 39;
constexpr int kGenShift = 40;

std::uint64_t gen_of(std::uint64_t s) { return s >> kGenShift; }
std::uint64_t slots_of(std::uint64_t s) { return s & kSlotMask; }
int limit_of(std::uint64_t s) { return static_cast<int>((s >> kLimitShift) & 0x7Full); }
bool closed(std::uint64_t s) { return (s & kClosed) != 0; }
static_assert(kMaxThreads - 1 <= 32, "worker slots must fit the 32-bit mask");

void futex_wait(std::atomic<std::uint32_t>& word, std::uint32_t expected) {
    syscall(SYS_futex, reinterpret_cast<std::uint32_t*>(&word), FUTEX_WAIT_PRIVATE, expected, nullptr, nullptr, 0);
}
void futex_wake(std::atomic<std::uint32_t>& word, int count) {
    syscall(SYS_futex, reinterpret_cast<std::uint32_t*>(&word), FUTEX_WAKE_PRIVATE, count, nullptr, nullptr, 0);
}

long env_us(const char* name, long fallback) {
    if (const char* v = std::getenv(name)) {
        char* end = nullptr;
        long x = std::strtol(v, &end, 10);
        if (end != v && x >= 0) return x;
    }
    return fallback;
}

thread_local bool tl_inside_job = false;

int count_cpus() {
    cpu_set_t set;
    CPU_ZERO(&set);
    if (sched_getaffinity(0, sizeof set, &set) == 0) {
        const int n = CPU_COUNT(&set);
        if (n > 0) return n;
    }
    const unsigned h = std::thread::hardware_concurrency();
    return h > 0 ? static_cast<int>(h) : 1;
}

bool yield_to_foreground_enabled() {
    // off unless asked for: on a quiet 2-core machine the window kept 93 % of headless images/s with it
    // and 96-99 % without (scripts/bench gui, alternating, docs/benchmarks.md)
    const char* v = std::getenv("HEADROOM_CPU_YIELD_TO_GUI");
    return v && v[0] == '1' && v[1] == '\0';
}

std::int64_t now_ns() {
    return std::chrono::duration_cast<std::chrono::nanoseconds>(Clock::now().time_since_epoch()).count();
}

struct Foreground {
    const int cpus = count_cpus();
    const bool enabled = yield_to_foreground_enabled();
    // A foreground thread that stays "busy" longer than this is more likely blocked outside its event
    // loop (a join, a lock) than drawing: the pool stops yielding to it, so a stale flag never leaves a
    // run on fewer threads for long.
    const std::int64_t hold_ns = env_us("HEADROOM_CPU_GUI_HOLD_MS", 25) * 1000000;
    alignas(64) std::atomic<int> busy{0};
    std::atomic<std::int64_t> since{0};  // now_ns() when busy last went from 0 to 1
    // threads the pool may use now
    int cap(int threads) const {
        if (!enabled) return threads;
        const int b = busy.load(std::memory_order_relaxed);
        if (b <= 0 || threads + b <= cpus) return threads;
        if (now_ns() - since.load(std::memory_order_relaxed) > hold_ns) return threads;
        return std::max(1, cpus - b);
    }
};

Foreground& foreground() {
    static Foreground* f = new Foreground;  // never destroyed (workers read it)
    return *f;
}

class Pool {
public:
    Pool()
        : worker_spin_(std::chrono::microseconds(env_us("HEADROOM_CPU_SPIN_US", 200))),
          join_spin_(std::chrono::microseconds(env_us("HEADROOM_CPU_JOIN_SPIN_US", 50))) {}

    int workers() const { return n_workers_.load(std::memory_order_acquire); }

    void run(int threads, std::int64_t n, ChunkFn fn, void* ctx) {
        threads = foreground().cap(threads);
        if (threads <= 1 || n <= 1 || tl_inside_job || busy_.exchange(true, std::memory_order_acquire)) {
            run_serial(n, fn, ctx);
            return;
        }
        struct Release {
            std::atomic<bool>& b;
            ~Release() { b.store(false, std::memory_order_release); }
        } release{busy_};
        const int want = static_cast<int>(std::min<std::int64_t>(thread_slots(threads), n)) - 1;
        std::uint64_t s = state_.load(std::memory_order_acquire);
        grow(want, gen_of(s));
        // Workers of the previous job leave right after its last chunk; wait until they have.
        for (int spins = 0; slots_of(s) != 0; ++spins) {
            if (spins < 2000)
                HR_CPU_RELAX();
            else
                sched_yield();
            s = state_.load(std::memory_order_acquire);
        }
        fn_ = fn;
        ctx_ = ctx;
        n_ = n;
        next_.store(0, std::memory_order_relaxed);
        done_.store(0, std::memory_order_relaxed);
        error_ = nullptr;
        has_error_.store(false, std::memory_order_relaxed);
        const std::uint64_t gen = (gen_of(s) + 1) & 0xFFFFFFull;
        state_.store((gen << kGenShift) | (static_cast<std::uint64_t>(want) << kLimitShift), std::memory_order_seq_cst);
        if (sleepers_.load(std::memory_order_seq_cst) > 0) {
            wake_seq_.fetch_add(1, std::memory_order_seq_cst);
            futex_wake(wake_seq_, INT_MAX);
        }
        tl_inside_job = true;
        work(fn, ctx, n, 0);
        tl_inside_job = false;
        state_.fetch_or(kClosed, std::memory_order_acq_rel);
        wait_done(n);
        if (has_error_.load(std::memory_order_acquire)) std::rethrow_exception(error_);
    }

private:
    static void run_serial(std::int64_t n, ChunkFn fn, void* ctx) {
        for (std::int64_t c = 0; c < n; ++c) fn(ctx, c, 0);
    }

    // Starts workers up to `want`; a new worker treats generation `seen` as done.
    void grow(int want, std::uint64_t seen) {
        int have = n_workers_.load(std::memory_order_relaxed);
        for (; have < want; ++have) {
            std::thread t([this, have, seen] { worker_main(have, seen); });
            t.detach();
        }
        n_workers_.store(have, std::memory_order_release);
    }

    // Claims and runs chunks until none are left; counts each finished chunk.
    void work(ChunkFn fn, void* ctx, std::int64_t n, int slot) {
        for (;;) {
            const std::int64_t c = next_.fetch_add(1, std::memory_order_relaxed);
            if (c >= n) return;
            try {
                fn(ctx, c, slot);
            } catch (...) {
                std::lock_guard<std::mutex> lock(error_mutex_);
                if (!has_error_.load(std::memory_order_relaxed)) {
                    error_ = std::current_exception();
                    has_error_.store(true, std::memory_order_release);
                }
            }
            if (done_.fetch_add(1, std::memory_order_acq_rel) + 1 == n) {
                done_seq_.fetch_add(1, std::memory_order_seq_cst);
                if (caller_sleeping_.load(std::memory_order_seq_cst)) futex_wake(done_seq_, 1);
            }
        }
    }

    void wait_done(std::int64_t n) {
        if (done_.load(std::memory_order_acquire) == n) return;
        const auto t0 = Clock::now();
        const auto yield_after = join_spin_ / 4;
        for (;;) {
            for (int i = 0; i < 64; ++i) {
                if (done_.load(std::memory_order_acquire) == n) return;
                HR_CPU_RELAX();
            }
            const auto waited = Clock::now() - t0;
            if (waited < yield_after) continue;
            if (waited < join_spin_) {
                sched_yield();
                continue;
            }
            // The thread we wait for is probably not running (preempted): sleep, so that this core
            // is free for it.
            const std::uint32_t v = done_seq_.load(std::memory_order_seq_cst);
            caller_sleeping_.store(true, std::memory_order_seq_cst);
            if (done_.load(std::memory_order_seq_cst) == n) {
                caller_sleeping_.store(false, std::memory_order_relaxed);
                return;
            }
            futex_wait(done_seq_, v);
            caller_sleeping_.store(false, std::memory_order_relaxed);
        }
    }

    void worker_main(int index, std::uint64_t seen) {
        char name[16];
        std::snprintf(name, sizeof name, "hr-cpu-%u", static_cast<unsigned>(index + 1) % 1000u);
        pthread_setname_np(pthread_self(), name);
        tl_inside_job = true;  // a worker's own calls to parallel_for run serially
        for (;;) {
            std::uint64_t s = wait_for_job(seen, index);
            // Join the job in the lowest free slot, unless it is closed or has all its workers.
            for (;;) {
                if (gen_of(s) == seen) break;
                const std::uint64_t used = slots_of(s);
                const int free_bit = used == kSlotMask ? 32 : __builtin_ctzll(~used);
                if (closed(s) || free_bit >= limit_of(s)) {
                    seen = gen_of(s);
                    break;
                }
                const std::uint64_t bit = 1ull << free_bit;
                if (state_.compare_exchange_weak(s, s | bit, std::memory_order_acq_rel, std::memory_order_acquire)) {
                    seen = gen_of(s);
                    work(fn_, ctx_, n_, free_bit + 1);
                    state_.fetch_and(~bit, std::memory_order_acq_rel);
                    break;
                }
            }
        }
    }

    // Returns the state once it shows a job newer than `seen` that is still open. Spins for
    // worker_spin_ (pausing, then yielding), then sleeps until the caller posts a job.
    std::uint64_t wait_for_job(std::uint64_t& seen, int index) {
        for (;;) {
            const auto t0 = Clock::now();
            const auto yield_after = worker_spin_ / 4;
            for (;;) {
                // While foreground work keeps this worker's slot out of the calls, leave the core to it.
                if (foreground().cap(index + 2) < index + 2) break;
                for (int i = 0; i < 64; ++i) {
                    const std::uint64_t s = state_.load(std::memory_order_acquire);
                    if (gen_of(s) != seen) {
                        if (!closed(s)) return s;
                        seen = gen_of(s);  // missed it: already done
                    }
                    HR_CPU_RELAX();
                }
                const auto waited = Clock::now() - t0;
                if (waited >= worker_spin_) break;
                if (waited >= yield_after) sched_yield();
            }
            sleepers_.fetch_add(1, std::memory_order_seq_cst);
            const std::uint32_t v = wake_seq_.load(std::memory_order_seq_cst);
            const std::uint64_t s = state_.load(std::memory_order_seq_cst);
            if (gen_of(s) != seen && !closed(s)) {
                sleepers_.fetch_sub(1, std::memory_order_seq_cst);
                return s;
            }
            futex_wait(wake_seq_, v);
            sleepers_.fetch_sub(1, std::memory_order_seq_cst);
        }
    }

    const std::chrono::nanoseconds worker_spin_, join_spin_;
    std::atomic<bool> busy_{false};
    std::atomic<int> n_workers_{0};
    alignas(64) std::atomic<std::uint64_t> state_{0};
    alignas(64) std::atomic<std::int64_t> next_{0};
    alignas(64) std::atomic<std::int64_t> done_{0};
    alignas(64) std::atomic<std::uint32_t> wake_seq_{0};
    std::atomic<int> sleepers_{0};
    alignas(64) std::atomic<std::uint32_t> done_seq_{0};
    std::atomic<bool> caller_sleeping_{false};
    // the job (written by the caller while no worker is joined)
    ChunkFn fn_ = nullptr;
    void* ctx_ = nullptr;
    std::int64_t n_ = 0;
    std::mutex error_mutex_;
    std::exception_ptr error_;
    std::atomic<bool> has_error_{false};
};

Pool& pool() {
    static Pool* p = new Pool;  // never destroyed: workers may still sleep in it at exit
    return *p;
}

}  // namespace

void parallel_run(int threads, std::int64_t n, ChunkFn fn, void* ctx) { pool().run(threads, n, fn, ctx); }

int pool_workers() { return pool().workers(); }

void foreground_begin() {
    Foreground& f = foreground();
    if (f.busy.fetch_add(1, std::memory_order_relaxed) == 0) f.since.store(now_ns(), std::memory_order_relaxed);
}
void foreground_end() { foreground().busy.fetch_sub(1, std::memory_order_relaxed); }
int effective_threads(int threads) { return std::min(thread_slots(threads), foreground().cap(thread_slots(threads))); }
int available_cpus() { return foreground().cpus; }

}  // namespace hr::cpu
