#pragma once
// RankProgress: what this process's training is doing, for the heartbeats its launcher watches (issue 45).
// The trainer notes each step it begins and finishes, the communicators note each wait for a collective (its
// name) and its end; any thread may read the record (the event stream's telemetry thread sends it with every
// heartbeat). From it the launcher tells a rank that waits for the others (in a collective) from one that
// computes and never gets there (a busy loop, a kernel that never returns) and names the latter. One record per
// process; thread-safe (a mutex around a few words, taken twice per collective).
#include <cstdint>
#include <string>

namespace hr {

struct RankProgress {
    std::int64_t step = 0;       // the step this rank is in (1-based; 0: before the first)
    std::string waiting;         // the collective it waits for ("all_reduce of one value (sum)"); "": computing
    double still_seconds = 0;    // seconds since the step or the wait last changed
};

// The trainer: this rank begins step `step` (1-based).
void note_step_begins(std::int64_t step);
// A communicator: this rank waits for `what` now (its wait() began); note_wait_ends() when it returned or threw.
void note_wait_begins(const std::string& what);
void note_wait_ends();
RankProgress rank_progress();

// A test's hook (docs/environment.md, HEADROOM_TEST_SPIN=RANK:STEP): rank RANK (OMPI_COMM_WORLD_RANK) spins
// forever in a busy loop when it begins step STEP, as a rank whose kernel never returns; nothing otherwise.
// The variable is read once per process.
void spin_here_for_test(std::int64_t step);

}  // namespace hr
