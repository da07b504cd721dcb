#pragma once
// The processes of one `headroom train --ranks N` job on this machine, as the launcher sees them: mpirun
// and everything below it (Open MPI puts each rank in a process group of its own, so mpirun's group does
// not hold the ranks; the tree does). The launcher samples the tree while the job runs (sample(), ten times
// a second), so it can still end every process it saw after mpirun is gone, notice a rank that is stopped
// (state T: SIGSTOP, a debugger, a frozen container) and end the job as a whole: signal() sends SIGCONT
// first, so a stopped process takes the signal at once. A pid is only signalled while its start time is
// the one sampled (no stranger that reused the pid). Not thread-safe; the launcher's thread only.
#include <sys/types.h>

#include <map>
#include <set>

namespace hrapp {

class RankJob {
public:
    explicit RankJob(pid_t mpirun) : m_root(mpirun) {}

    // Reads /proc: the processes below mpirun now (added to those seen), each rank's pid and state.
    void sample();
    // SIGCONT, then `sig`, to every process of the job seen and still running (mpirun too). Returns how many.
    int signal(int sig);
    // The processes of the job seen and still running (mpirun included while it runs).
    std::set<pid_t> running() const;
    // Ranks (OMPI_COMM_WORLD_RANK) seen stopped (state T or t) for at least `seconds` at a time.
    std::set<int> stoppedRanks(double seconds) const;
    // Whether a rank process seen has ended while mpirun still runs.
    bool aRankEnded() const;

private:
    struct Seen {
        unsigned long long start = 0;  // /proc/PID/stat field 22: tells a reused pid apart
        int rank = -1;                  // OMPI_COMM_WORLD_RANK, -1 for mpirun and helpers
        double stoppedSince = -1;       // seconds on the monotonic clock; -1: not stopped at the last sample
        double longestStop = 0;         // the longest time it was seen stopped, seconds
        bool gone = false;
    };
    bool alive(pid_t pid, const Seen& s) const;
    pid_t m_root;
    std::map<pid_t, Seen> m_seen;
    double m_lastSample = 0;
};

}  // namespace hrapp
