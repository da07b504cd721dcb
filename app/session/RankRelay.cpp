#include "session/RankRelay.h"

#include <algorithm>
#include <cmath>

#include <signal.h>

#include <QCoreApplication>
#include <QDir>
#include <QElapsedTimer>
#include <QFile>
#include <QProcessEnvironment>

#include "base/error.h"
#include "session/RunText.h"

namespace hrapp {

namespace {
struct RelayText {
    Q_DECLARE_TR_FUNCTIONS(RankRelay)
};
constexpr int kEscalateMs = 15000;
constexpr int kOutputKeep = 4096;
}  // namespace

RankRelay::RankRelay(Sink sink, QObject* parent) : QObject(parent), m_sink(std::move(sink)) {
    m_process.setProcessChannelMode(QProcess::MergedChannels);
    connect(&m_process, &QProcess::readyRead, this, [this] {
        m_output += m_process.readAll();
        if (m_output.size() > kOutputKeep) m_output = m_output.right(kOutputKeep);
    });
    connect(&m_process, &QProcess::finished, this, &RankRelay::onFinished);
    connect(&m_server, &QTcpServer::newConnection, this, &RankRelay::accept);
    m_escalate.setInterval(kEscalateMs);
    connect(&m_escalate, &QTimer::timeout, this, [this] {
        // the launcher counts its signals: the 2nd ends the ranks now, the 3rd kills mpirun's group
        if (!isRunning() || m_signalsSent >= 3) return m_escalate.stop();
        ::kill(static_cast<pid_t>(m_process.processId()), SIGTERM);
        ++m_signalsSent;
    });
}

RankRelay::~RankRelay() {
    if (isRunning()) finish(30000);
}

bool RankRelay::start(const hr::TrainConfig& config, const QString& outDir, int ranks, const QString& program,
                      QString* error, bool resume) {
    m_dir = std::make_unique<QTemporaryDir>(QDir::temp().filePath(QStringLiteral("headroom-ranks-XXXXXX")));
    if (!m_dir->isValid()) {
        if (error) *error = RelayText::tr("cannot create a temporary folder for the ranks' configuration: %1").arg(m_dir->errorString());
        return false;
    }
    const QString configPath = m_dir->filePath(QStringLiteral("config.json"));
    {
        QFile f(configPath);
        if (!f.open(QIODevice::WriteOnly) || f.write(QByteArray::fromStdString(hr::train_config_to_json(config).dump(2))) < 0) {
            if (error) *error = RelayText::tr("cannot write %1: %2").arg(configPath, f.errorString());
            return false;
        }
    }
    m_outDir = outDir;
    m_ranks = ranks;
    for (auto& [peer, partial] : m_peers) peer->deleteLater();
    m_peers.clear();
    m_server.close();
    if (!m_server.listen(QHostAddress::LocalHost, 0)) {
        if (error) *error = RelayText::tr("cannot listen for the ranks' events: %1").arg(m_server.errorString());
        return false;
    }
    m_rank0End.reset();
    m_otherEnds.clear();
    m_output.clear();
    m_signalsSent = 0;
    m_stopRequested = false;
    m_done = false;
    QProcessEnvironment env = QProcessEnvironment::systemEnvironment();
    env.remove(QStringLiteral("HEADROOM_EVENTS_DIR"));
    env.insert(QStringLiteral("HEADROOM_EVENTS_ADDR"), QStringLiteral("127.0.0.1:%1").arg(m_server.serverPort()));
    env.insert(QStringLiteral("HEADROOM_EVENTS_TELEMETRY_MS"), QString::number(m_telemetryMs));
    m_process.setProcessEnvironment(env);
    QStringList args{QStringLiteral("train"), QStringLiteral("--config"), configPath,
                     QStringLiteral("--ranks"), QString::number(ranks), QStringLiteral("--no-history"),
                     QStringLiteral("--quiet"), QStringLiteral("--pause-file"),
                     m_dir->filePath(QStringLiteral("pause"))};
    if (!outDir.isEmpty()) args << QStringLiteral("--out") << outDir;
    if (resume)  // Continue training: the continued configuration as a whole (app/cli --resume DIR --config FILE)
        args = QStringList{QStringLiteral("train"), QStringLiteral("--resume"), outDir, QStringLiteral("--config"),
                           configPath, QStringLiteral("--ranks"), QString::number(ranks), QStringLiteral("--no-history"),
                           QStringLiteral("--quiet"), QStringLiteral("--pause-file"), m_dir->filePath(QStringLiteral("pause"))};
    const QString exe = !program.isEmpty() ? program
                        : qEnvironmentVariableIsSet("HEADROOM_PROGRAM") ? qEnvironmentVariable("HEADROOM_PROGRAM")
                                                                         : QCoreApplication::applicationFilePath();
    m_process.start(exe, args);
    if (!m_process.waitForStarted(10000)) {
        if (error) *error = RelayText::tr("could not start %1: %2").arg(exe, m_process.errorString());
        return false;
    }
    m_process.closeWriteChannel();
    return true;
}

void RankRelay::stop() {
    if (!isRunning() || m_stopRequested) return;
    m_stopRequested = true;
    ::kill(static_cast<pid_t>(m_process.processId()), SIGTERM);  // the launcher passes it on to every rank
    m_signalsSent = 1;
    m_escalate.start();
}

void RankRelay::setPaused(bool paused) {
    if (!m_dir) return;
    const QString path = m_dir->filePath(QStringLiteral("pause"));
    if (paused) {
        QFile f(path);
        if (f.open(QIODevice::WriteOnly)) f.close();
    } else {
        QFile::remove(path);
    }
}

void RankRelay::finish(int ms, bool stopFirst) {
    if (m_done) return;
    if (stopFirst) stop();
    QElapsedTimer t;
    t.start();
    while (isRunning() && t.elapsed() < ms) {
        m_process.waitForFinished(200);
        accept();
        for (auto& [peer, partial] : m_peers) read(peer);
    }
    if (isRunning()) {  // the launcher did not end: kill mpirun's group through it, then the launcher
        for (; m_signalsSent < 3; ++m_signalsSent) ::kill(static_cast<pid_t>(m_process.processId()), SIGTERM);
        if (!m_process.waitForFinished(5000)) {
            m_process.kill();
            m_process.waitForFinished(5000);
        }
    }
    if (!m_done) onFinished();
}

void RankRelay::accept() {
    while (QTcpSocket* peer = m_server.nextPendingConnection()) {
        m_peers[peer];
        connect(peer, &QTcpSocket::readyRead, this, [this, peer] { read(peer); });
    }
}

void RankRelay::read(QTcpSocket* peer) {
    auto it = m_peers.find(peer);
    if (it == m_peers.end()) return;
    QByteArray& partial = it->second;
    partial += peer->readAll();
    qsizetype nl;
    while ((nl = partial.indexOf('\n')) >= 0) {
        const QByteArray line = partial.left(nl);
        partial.remove(0, nl + 1);
        if (!line.trimmed().isEmpty()) handleLine(line);
    }
}

void RankRelay::drain() {
    while (m_server.waitForNewConnection(0)) accept();
    accept();
    for (auto& [peer, partial] : m_peers) {  // the ranks are gone: what they sent is in the socket's buffer
        while (peer->waitForReadyRead(20)) {
        }
        read(peer);
    }
}

void RankRelay::handleLine(const QByteArray& line) {
    RunEvent e;
    int rank = -1;
    try {
        const nlohmann::json j = nlohmann::json::parse(line.toStdString());
        if (j.is_object() && j.contains("rank") && j["rank"].is_number_integer()) rank = j["rank"].get<int>();
        if (rank < 0 || rank >= m_ranks) throw std::runtime_error("no rank of this run");
        e = runEventFromJson(j);
    } catch (const std::exception& ex) {
        if (!m_badLineSaid)
            m_sink(hr::LogEvent{hr::LogLevel::warning,
                                RelayText::tr("rank %1 sent an event that could not be read (%2); it is skipped")
                                    .arg(rank)
                                    .arg(QString::fromUtf8(ex.what()))
                                    .toStdString()});
        m_badLineSaid = true;
        return;
    }
    if (auto* end = std::get_if<RunEnded>(&e)) {  // delivered once the launcher has exited (no rank left)
        if (rank == 0) m_rank0End = *end;
        else m_otherEnds[rank] = *end;
        return;
    }
    if (auto* t = std::get_if<RankTelemetry>(&e)) {  // every rank's, tagged with the rank of its file
        RankTelemetry copy = *t;
        copy.rank = rank;
        return m_sink(copy);
    }
    if (rank == 0) return m_sink(e);
    if (auto* m = std::get_if<hr::MemoryEvent>(&e)) {
        hr::MemoryEvent copy = *m;
        copy.rank = rank;
        return m_sink(copy);
    }
    if (auto* l = std::get_if<hr::LogEvent>(&e))
        m_sink(hr::LogEvent{l->level, RelayText::tr("rank %1: %2").arg(rank).arg(logText(*l)).toStdString(), {}});
}

RunEnded RankRelay::fallbackEnd() const {
    RunEnded end;
    end.outDir = m_outDir.toStdString();
    hr::TrainResult& r = end.result;
    r.world_size = m_ranks;
    if (m_stopRequested) {  // stopped, but rank 0 did not get to write its end (the ranks were ended)
        r.status = "stopped";
        return end;
    }
    r.status = "failed";
    for (const auto& [rank, e] : m_otherEnds)  // a rank's own account of what went wrong, first
        if (e.result.status == "failed") {
            r.error = RelayText::tr("rank %1: %2").arg(rank).arg(resultError(e.result)).toStdString();
            r.bad_input = e.result.bad_input;
            r.out_of_memory = e.result.out_of_memory;
            return end;
        }
    const QString said = QString::fromLocal8Bit(m_output).trimmed();
    const QString last = said.section(QLatin1Char('\n'), -3);  // the launcher's and mpirun's last lines
    const QString status = m_process.exitStatus() == QProcess::NormalExit
                               ? RelayText::tr("exit status %1").arg(m_process.exitCode())
                               : RelayText::tr("the launcher crashed");
    r.error = (last.isEmpty() ? RelayText::tr("the ranks ended before rank 0 finished the run (%1)").arg(status)
                              : RelayText::tr("the ranks ended before rank 0 finished the run (%1): %2").arg(status, last))
                  .toStdString();
    return end;
}

void RankRelay::onFinished() {
    if (m_done) return;
    m_done = true;
    m_escalate.stop();
    m_output += m_process.readAll();
    drain();  // the last lines
    RunEnded end = m_rank0End ? *m_rank0End : fallbackEnd();
    m_dir.reset();
    m_sink(end);
}

}  // namespace hrapp
