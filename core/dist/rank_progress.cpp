#include "dist/rank_progress.h"

#include <chrono>
#include <cstdlib>
#include <mutex>

namespace hr {

namespace {
struct ProgressRecord {
    std::mutex mutex;
    RankProgress now;
    std::chrono::steady_clock::time_point changed = std::chrono::steady_clock::now();
};
ProgressRecord& progress_record() {
    static ProgressRecord* r = new ProgressRecord();  // never destroyed: a heartbeat may read it at exit
    return *r;
}
}  // namespace

void note_step_begins(std::int64_t step) {
    ProgressRecord& r = progress_record();
    std::lock_guard lock(r.mutex);
    r.now.step = step;
    r.now.waiting.clear();
    r.changed = std::chrono::steady_clock::now();
}

void note_wait_begins(const std::string& what) {
    ProgressRecord& r = progress_record();
    std::lock_guard lock(r.mutex);
    r.now.waiting = what;
    r.changed = std::chrono::steady_clock::now();
}

void note_wait_ends() {
    ProgressRecord& r = progress_record();
    std::lock_guard lock(r.mutex);
    r.now.waiting.clear();
    r.changed = std::chrono::steady_clock::now();
}

RankProgress rank_progress() {
    ProgressRecord& r = progress_record();
    std::lock_guard lock(r.mutex);
    RankProgress out = r.now;
    out.still_seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - r.changed).count();
    return out;
}

void spin_here_for_test(std::int64_t step) {
    static const struct SpinAt {
        int rank = -1;
        long long step = -1;
        SpinAt() {
            const char* v = std::getenv("HEADROOM_TEST_SPIN");  // RANK:STEP
            if (!v) return;
            char* end = nullptr;
            const long r = std::strtol(v, &end, 10);
            if (end == v || *end != ':') return;
            const long long s = std::strtoll(end + 1, nullptr, 10);
            const char* world = std::getenv("OMPI_COMM_WORLD_RANK");
            if (!world || std::atoi(world) != static_cast<int>(r)) return;
            rank = static_cast<int>(r);
            step = s;
        }
    } at;
    if (at.rank < 0 || at.step != step) return;
    volatile std::uint64_t spins = 0;
    for (;;) spins = spins + 1;  // busy, not blocked: the process stays running (state R)
}

}  // namespace hr
