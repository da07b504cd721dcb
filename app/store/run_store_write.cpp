// RunStore: writing runs (begin, buffered metrics and telemetry, memory, the end of a run).
#include "store/run_store.h"

#include <QCoreApplication>
#include <QDir>
#include <QFileInfo>
#include <QJsonArray>
#include <QJsonDocument>
#include <QSqlError>
#include <QSqlQuery>
#include <QStandardPaths>
#include <QSet>
#include <QTimeZone>
#include <QUuid>

#include <algorithm>
#include <cmath>
#include <cerrno>
#include <csignal>

#include <sys/types.h>
#include <unistd.h>

#include "memory/step_timeline.h"
#include "train/run_summary.h"
#include "train/trainer.h"
#include "store/run_store_detail.h"

namespace hrapp {

using namespace store_detail;

// ---- writing ------------------------------------------------------------------------------------

QString RunStore::defaultRunName(const QString& model, const QString& data) {
    const QString m = model.isEmpty() ? QStringLiteral("model") : model;
    return data.isEmpty() ? m : QCoreApplication::translate("RunStore", "%1 on %2").arg(m, data);
}

qint64 RunStore::beginRun(const QJsonObject& config, const QJsonObject& spec, const QString& device,
                          const QString& name) {
    const QString n = name.isEmpty() ? defaultRunName(spec.value(QStringLiteral("name")).toString(),
                                                      config.value(QStringLiteral("data")).toString())
                                     : name;
    return insertRun(n, jsonText(spec), jsonText(config), device);
}

qint64 RunStore::insertRun(const QString& name, const QString& specText, const QString& configText,
                           const QString& device) {
    if (!isOpen()) {
        fail(QCoreApplication::translate("RunStore", "The run history is not open."));
        return 0;
    }
    QSqlQuery q(db());
    q.prepare(QStringLiteral("INSERT INTO runs(name, status, created, spec, config, device, pid) "
                             "VALUES (?, 'running', ?, ?, ?, ?, ?)"));
    q.addBindValue(name);
    q.addBindValue(nowIso());
    q.addBindValue(specText);
    q.addBindValue(configText);
    q.addBindValue(device);
    q.addBindValue(static_cast<qint64>(::getpid()));
    if (!q.exec()) {
        fail(q.lastError().text());
        emit writeFailed(m_lastError);
        return 0;
    }
    const qint64 id = q.lastInsertId().toLongLong();
    emit runsChanged();
    return id;
}

void RunStore::noteBuffered() {
    if (pendingRows() >= m_batchSize || (m_sinceFlush.isValid() && m_sinceFlush.elapsed() >= m_flushIntervalMs)) {
        flush();
        return;
    }
    if (!m_flushTimer.isActive()) m_flushTimer.start(m_flushIntervalMs);
}

int RunStore::pendingRows() const {
    return static_cast<int>(m_steps.size() + m_epochs.size() + m_telemetry.size() + m_memory.size());
}

void RunStore::addStep(qint64 runId, const hr::StepEvent& e) {
    m_steps.push_back({runId, e});
    noteBuffered();
}

void RunStore::addEpoch(qint64 runId, const hr::EpochEvent& e) {
    m_epochs.push_back({runId, e});
    flush();  // rare and shown in the Runs tab: write at once
}

void RunStore::addTelemetry(qint64 runId, const hr::TelemetrySample& s) {
    auto it = m_telemetryOrigin.find(runId);
    if (it == m_telemetryOrigin.end()) it = m_telemetryOrigin.insert(runId, s.t_seconds);
    m_telemetry.push_back({runId, s.t_seconds - it.value(), s});
    noteBuffered();
}

void RunStore::addMemory(qint64 runId, const hr::MemoryEvent& e) {
    m_lastLedger[runId] = e.ledger;
    m_memory.push_back({runId, e});
    noteBuffered();
}

bool RunStore::flush() {
    m_flushTimer.stop();
    m_sinceFlush.restart();
    if (pendingRows() == 0 || !isOpen()) return pendingRows() == 0;
    QSqlDatabase d = db();
    if (!d.transaction()) {
        fail(d.lastError().text());
        emit writeFailed(m_lastError);
        return false;
    }
    bool ok = true;
    if (!m_steps.isEmpty()) {
        QSqlQuery q(d);
        q.prepare(QStringLiteral("INSERT INTO step_metrics(run_id, step, epoch, loss, accuracy, lr, step_seconds, "
                                 "images_per_second, elapsed_seconds, loss_scale, skipped) "
                                 "VALUES (?,?,?,?,?,?,?,?,?,?,?)"));
        for (const auto& p : m_steps) {
            const auto& e = p.e;
            q.addBindValue(p.run);
            q.addBindValue(static_cast<qint64>(e.step));
            q.addBindValue(e.epoch);
            q.addBindValue(num(e.loss));
            q.addBindValue(num(e.accuracy));
            q.addBindValue(num(e.lr));
            q.addBindValue(num(e.step_seconds));
            q.addBindValue(num(e.images_per_second));
            q.addBindValue(num(e.elapsed_seconds));
            q.addBindValue(num(e.loss_scale));
            q.addBindValue(e.skipped ? 1 : 0);
            ok = ok && q.exec();
        }
        if (!ok) fail(q.lastError().text());
    }
    if (ok && !m_epochs.isEmpty()) {
        QSqlQuery q(d);
        q.prepare(QStringLiteral("INSERT INTO epoch_metrics(run_id, epoch, step, train_loss, train_accuracy, "
                                 "test_loss, test_accuracy, seconds, images_per_second) VALUES (?,?,?,?,?,?,?,?,?)"));
        for (const auto& p : m_epochs) {
            const auto& e = p.e;
            q.addBindValue(p.run);
            q.addBindValue(e.epoch);
            q.addBindValue(static_cast<qint64>(e.step));
            q.addBindValue(num(e.train_loss));
            q.addBindValue(num(e.train_accuracy));
            q.addBindValue(num(e.test_loss));
            q.addBindValue(num(e.test_accuracy));
            q.addBindValue(num(e.seconds));
            q.addBindValue(num(e.images_per_second));
            ok = ok && q.exec();
        }
        if (!ok) fail(q.lastError().text());
    }
    if (ok && !m_telemetry.isEmpty()) {
        QSqlQuery q(d);
        q.prepare(QStringLiteral("INSERT INTO telemetry(run_id, t, step, gpu, gpu_name, cpu_util, ram_used, ram_total, "
                                 "process_rss, gpu_mem_used, gpu_mem_total, power_w, power_limit_w, gpu_util, "
                                 "mem_util, temperature_c, sm_clock_mhz, energy_j) "
                                 "VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)"));
        for (const auto& p : m_telemetry) {
            const auto& h = p.s.host;
            auto bindCommon = [&](int gpu, const QString& name) {
                q.addBindValue(p.run);
                q.addBindValue(p.t);
                q.addBindValue(static_cast<qint64>(p.s.step));
                q.addBindValue(gpu);
                q.addBindValue(name);
                q.addBindValue(num(h.cpu_utilization));
                q.addBindValue(num(static_cast<qint64>(h.ram_used)));
                q.addBindValue(num(static_cast<qint64>(h.ram_total)));
                q.addBindValue(num(static_cast<qint64>(h.process_rss)));
            };
            if (p.s.gpus.empty()) {
                bindCommon(-1, QString());
                for (int i = 0; i < 9; ++i) q.addBindValue(QVariant(QMetaType(QMetaType::Double)));
                ok = ok && q.exec();
            }
            for (const auto& g : p.s.gpus) {
                bindCommon(g.index, QString::fromStdString(g.name));
                q.addBindValue(num(static_cast<qint64>(g.memory_used)));
                q.addBindValue(num(static_cast<qint64>(g.memory_total)));
                q.addBindValue(num(g.power_watts));
                q.addBindValue(num(g.power_limit_watts));
                q.addBindValue(num(g.gpu_utilization));
                q.addBindValue(num(g.memory_utilization));
                q.addBindValue(num(g.temperature_c));
                q.addBindValue(num(g.sm_clock_mhz));
                q.addBindValue(num(g.energy_joules));
                ok = ok && q.exec();
            }
        }
        if (!ok) fail(q.lastError().text());
    }
    if (ok && !m_memory.isEmpty()) {
        QSqlQuery q(d);
        q.prepare(QStringLiteral("INSERT INTO memory_samples(run_id, t, step, live_total, reserved_free, "
                                 "device_capacity) VALUES (?,?,?,?,?,?)"));
        QSet<qint64> runs;
        for (const auto& p : m_memory) {
            q.addBindValue(p.run);
            q.addBindValue(p.e.elapsed_seconds);
            q.addBindValue(static_cast<qint64>(p.e.step));
            q.addBindValue(static_cast<qint64>(p.e.ledger.live_total));
            q.addBindValue(static_cast<qint64>(p.e.ledger.reserved_free));
            q.addBindValue(static_cast<qint64>(p.e.device_capacity));
            ok = ok && q.exec();
            runs.insert(p.run);
        }
        if (!ok) fail(q.lastError().text());
        for (qint64 r : runs)
            if (ok) ok = writeMemoryCategories(r, m_lastLedger.value(r));
    }
    if (!ok || !d.commit()) {
        if (ok) fail(d.lastError().text());
        d.rollback();
        emit writeFailed(m_lastError);
        // keep the rows: a locked database may accept them at the next flush
        return false;
    }
    ++m_commits;
    m_steps.clear();
    m_epochs.clear();
    m_telemetry.clear();
    m_memory.clear();
    return true;
}

bool RunStore::writeMemoryCategories(qint64 runId, const hr::LedgerSnapshot& s) {
    for (hr::MemCategory c : hr::all_categories()) {
        if (!exec(QStringLiteral("INSERT INTO memory(run_id, category, peak, at_peak) VALUES (?,?,?,?) "
                                 "ON CONFLICT(run_id, category) DO UPDATE SET peak = excluded.peak, "
                                 "at_peak = excluded.at_peak"),
                  {runId, QString::fromLatin1(hr::category_name(c)), static_cast<qint64>(hr::at(s.peak, c)),
                   static_cast<qint64>(hr::at(s.at_peak, c))}))
            return false;
    }
    return true;
}

void RunStore::setPredictedMemory(qint64 runId, const hr::CategoryBytes& predicted) {
    if (!isOpen()) return;
    for (hr::MemCategory c : hr::all_categories())
        exec(QStringLiteral("INSERT INTO memory(run_id, category, predicted) VALUES (?,?,?) "
                            "ON CONFLICT(run_id, category) DO UPDATE SET predicted = excluded.predicted"),
             {runId, QString::fromLatin1(hr::category_name(c)), static_cast<qint64>(hr::at(predicted, c))});
}

QJsonObject RunStore::finalMetrics(const hr::TrainResult& r, const std::vector<std::size_t>& predictedRankTotals) {
    // the figures run.json's "final" has (core/train/run_summary.h), and "distributed" for several ranks
    nlohmann::json m = hr::run_final_summary(r);
    if (r.world_size > 1) m["distributed"] = hr::run_distributed_summary(r, 0, predictedRankTotals);
    // the chosen step's timeline, as run.json's "timeline" (bounded; the report's sentence)
    if (!r.step_timeline.empty()) m["timeline"] = hr::step_timeline_summary_json(r.step_timeline);
    return QJsonDocument::fromJson(QByteArray::fromStdString(m.dump())).object();
}

void RunStore::finishRun(qint64 runId, const hr::TrainResult& r, const std::vector<std::size_t>& predictedRankTotals) {
    const QJsonObject m = finalMetrics(r, predictedRankTotals);
    // The result's ledger holds the run's peaks: they are the measured figures of record.
    flush();
    if (r.ledger.peak_total > 0 && isOpen()) writeMemoryCategories(runId, r.ledger);
    if (!r.device_name.empty() && isOpen())
        exec(QStringLiteral("UPDATE runs SET device = ? WHERE id = ?"), {QString::fromStdString(r.device_name), runId});
    finishRun(runId, QString::fromStdString(r.status), QString::fromStdString(r.error), m);
}

void RunStore::finishRun(qint64 runId, const QString& status, const QString& error, const QJsonObject& finalMetrics) {
    flush();
    if (!isOpen()) return;
    QString st = status;
    if (st != QLatin1String("finished") && st != QLatin1String("stopped") && st != QLatin1String("failed"))
        st = QStringLiteral("failed");
    if (!exec(QStringLiteral("UPDATE runs SET status = ?, finished = ?, final_metrics = ?, error = ? WHERE id = ?"),
              {st, nowIso(), jsonText(finalMetrics), error.isEmpty() ? QVariant(QMetaType(QMetaType::QString)) : QVariant(error),
               runId}))
        emit writeFailed(m_lastError);
    m_telemetryOrigin.remove(runId);
    m_lastLedger.remove(runId);
    emit runsChanged();
}

}  // namespace hrapp
