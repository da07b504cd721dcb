#pragma once
// RankRelay: a multi-rank run of the window as child processes (issue 10, docs/design.md decision 8). It
// writes the run's TrainConfig to a temporary config.json and starts
//   headroom train --config DIR/config.json --ranks N --out OUT --no-history --quiet
// (the launcher of app/cli/train_command.cpp, which runs mpirun on the same binary) with
// HEADROOM_EVENTS_ADDR=127.0.0.1:PORT, its own listening socket: the launcher, which receives every rank's
// events on a socket of its own (cli/rank_events.h), passes their JSON lines (each carrying its "rank") on to
// it, so no rank needs the window's disk (issue 45). It reads them as
// they arrive and hands them to its sink, RunController::deliver(): rank 0's every
// event, the other ranks' memory (tagged with their rank) and warnings, and every rank's telemetry
// (RankTelemetry: what the rank sees of its machine, which may not be the window's). The run's end is delivered once
// the launcher has exited, so when the controller says the run finished, no rank is left: rank 0's own
// end when it sent one, else a failed end naming the cause (a rank's error, the launcher's last words,
// its exit status) or, after stop(), a stopped one. The history record is the controller's (the child
// runs with --no-history); rank 0 writes the run folder. The socket listens on loopback (the launcher is a
// child of this process).
//
// setPaused() creates or removes DIR/pause (the launcher's --pause-file): rank 0 sees it within 200 ms
// and every rank pauses after the same step; Stop while paused still ends every rank.
// stop() signals the launcher (SIGTERM), which passes it on to every rank through mpirun: the ranks stop
// after the same step and rank 0 writes the results so far. Unanswered, it signals again after 15 s
// (mpirun ends the ranks) and again after 30 s (the launcher kills mpirun's process group).
// Lives on the thread that created it (the controller's), which runs an event loop.
#include <QObject>
#include <QProcess>
#include <QString>
#include <QTcpServer>
#include <QTcpSocket>
#include <QTemporaryDir>
#include <QTimer>
#include <QVector>

#include <functional>
#include <map>
#include <memory>
#include <optional>

#include "session/RunEvent.h"
#include "train/config.h"

namespace hrapp {

class RankRelay : public QObject {
    Q_OBJECT
public:
    using Sink = std::function<void(const RunEvent&)>;
    explicit RankRelay(Sink sink, QObject* parent = nullptr);
    ~RankRelay() override;  // a run still going is stopped and waited for (finish(30000))

    // Starts the ranks; false with *error when the child cannot start (nothing delivered then).
    // program: the headroom binary ("" : $HEADROOM_PROGRAM when set, e.g. by a harness that is not
    // headroom itself, else this program).
    // resume: continues the run in outDir from its newest checkpoint instead (headroom train --resume OUT
    // --config FILE --ranks N: config is the continued configuration, RunController::continuedConfig's, whose
    // length, threads, device, checkpoint interval and sharding stage may differ from the run's own).
    bool start(const hr::TrainConfig& config, const QString& outDir, int ranks, const QString& program,
               QString* error = nullptr, bool resume = false);
    void stop();
    // How often every rank sends its telemetry (HEADROOM_EVENTS_TELEMETRY_MS; 100 ms .. 10 s), for the next start().
    void setTelemetryIntervalMs(int ms) { m_telemetryMs = ms; }
    // Pauses the ranks between steps, or lets them go on: the launcher was started with --pause-file
    // DIR/pause, which rank 0 watches; the ranks agree once per step, so they pause after the same one.
    void setPaused(bool paused);
    bool isRunning() const { return m_process.state() != QProcess::NotRunning; }
    // Waits up to ms for the launcher to end (stopping it first when stop is true), then delivers the end;
    // past the time it kills the launcher and delivers a stopped/failed end. For closing the window.
    void finish(int ms, bool stop = true);

    qint64 launcherPid() const { return m_process.processId(); }

private:
    void accept();                     // the ranks' new connections
    void read(QTcpSocket* peer);       // whole lines only; the rest waits for more
    void drain();                      // every line the ranks sent, once the launcher has ended
    void onFinished();
    void handleLine(const QByteArray& line);
    RunEnded fallbackEnd() const;

    Sink m_sink;
    QProcess m_process;
    std::unique_ptr<QTemporaryDir> m_dir;
    QTimer m_escalate;
    QTcpServer m_server;
    std::map<QTcpSocket*, QByteArray> m_peers;  // each rank's connection and its partial line
    std::optional<RunEnded> m_rank0End;
    std::map<int, RunEnded> m_otherEnds;
    QByteArray m_output;  // the launcher's and mpirun's own lines (the last few kilobytes)
    QString m_outDir;
    int m_ranks = 0;
    int m_telemetryMs = 500;
    int m_signalsSent = 0;
    bool m_stopRequested = false;
    bool m_done = false;
    bool m_badLineSaid = false;
};

}  // namespace hrapp
