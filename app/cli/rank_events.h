#pragma once
// RankEvents: the launcher's end of the ranks' event channel (issue 45). `headroom train --ranks N` listens on
// a TCP socket and gives its address to every rank (HEADROOM_EVENTS_ADDR, passed on by mpirun with -x, so ranks
// on other hosts get it too); each rank sends its events there as JSON lines (session/RunEvent's one
// serialiser, plus "rank"). The launcher reads them between its waits (pump(): never blocks):
// - the heartbeats: every rank's telemetry line carries its progress (dist/rank_progress.h), so stalls()
//   names a rank that stopped making progress while the others wait for it, whether its process runs (a busy
//   loop, a call that never returns) or sends nothing any more (a stopped process, a host cut off);
// - the lines go on unchanged to the launcher's own parent when it has one (its HEADROOM_EVENTS_ADDR: the
//   window), or into DIR/rank<R>.jsonl on the launcher's disk (its HEADROOM_EVENTS_DIR), so no rank needs a
//   disk shared with whoever watches.
// Not thread-safe: the launcher's thread only.
#include <QString>

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "dist/rank_progress.h"

namespace hrapp {

// A TCP connection to HOST:PORT ("[v6]:PORT" too) for event lines; sends time out after 10 s, so a parent
// that stopped reading does not hold a rank for good. -1 when it cannot be made.
int connectRankEventsUpstream(const QString& address);
// Sends all of `bytes` (EINTR retried); false when the peer is gone.
bool sendAllRankEvents(int fd, const std::string& bytes);

class RankEvents {
public:
    RankEvents() = default;
    ~RankEvents();
    RankEvents(const RankEvents&) = delete;
    RankEvents& operator=(const RankEvents&) = delete;

    // Listens on `host` (an address of this machine the ranks can reach), any free port. False with *error.
    bool listen(const QString& host, QString* error);
    QString address() const;  // "HOST:PORT" for HEADROOM_EVENTS_ADDR
    // Where the lines go on to: the parent's socket (HOST:PORT) or a folder for rank<R>.jsonl; "" for neither.
    // False when the parent's socket cannot be reached (the run goes on, its lines passed on to no one).
    bool forwardTo(const QString& address, const QString& dir);
    // Accepts the ranks' connections and reads what they sent, whole lines, without waiting.
    void pump();

    // A rank's last heartbeat, as the launcher received it.
    struct Beat {
        hr::RankProgress progress;
        double received = 0;   // seconds on the launcher's monotonic clock
        std::string host;      // the rank's machine
        bool ended = false;    // it sent its end (RunEnded)
        double closed = -1;    // when its connection closed (the launcher's clock); -1: open
    };
    // A rank that stopped making progress, as the heartbeats tell it.
    struct Stall {
        int rank = 0;
        std::int64_t step = 0;  // the step it was in (1-based; 0: before its first)
        bool silent = false;    // it sent nothing for `seconds` (stopped, or its host cut off); else it runs
        double seconds = 0;     // how long without progress
        std::string host;
    };
    // The ranks without progress for at least `timeout` s at `now` (the launcher's clock): silent ones (nothing
    // heard for that long), and running ones that compute (wait for no collective) that long while another
    // rank's last word was that it waits (a rank before its first step, setting up, is judged silent only).
    // While the job runs (atEnd false) a rank that ended or closed its
    // connection is not judged; once mpirun has ended (atEnd), every rank that did not send its end is, with
    // its silence counted up to when its connection closed (the job's end closes them all).
    std::vector<Stall> stalls(double timeout, double now, bool atEnd = false) const;
    // The same rule over given heartbeats (for tests).
    static std::vector<Stall> stallsOf(const std::map<int, Beat>& beats, double timeout, double now, bool atEnd);
    const std::map<int, Beat>& beats() const { return m_beats; }

    static double clock();  // the monotonic clock the launcher judges by, seconds

private:
    struct Peer {
        int fd = -1;
        int rank = -1;  // from its first line
        std::string partial;
    };
    void handleLine(Peer& peer, const std::string& line);
    void forward(int rank, const std::string& line);

    int m_listen = -1;
    QString m_host;
    int m_port = 0;
    std::vector<Peer> m_peers;
    std::map<int, Beat> m_beats;
    int m_upstream = -1;
    QString m_dir;
    std::map<int, int> m_files;  // rank -> fd of DIR/rank<R>.jsonl
};

}  // namespace hrapp
