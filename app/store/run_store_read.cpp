// RunStore: reading runs back (lists, filters, series, overlays) and editing them (rename, delete).
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

#include "train/run_summary.h"
#include "train/trainer.h"
#include "store/run_store_detail.h"

namespace hrapp {

using namespace store_detail;

// ---- reading ------------------------------------------------------------------------------------

static const char* kRunColumns =
    "SELECT r.id, r.name, r.status, r.created, r.finished, r.device, r.error, r.spec, r.config, r.final_metrics, "
    "(SELECT COUNT(*) FROM step_metrics s WHERE s.run_id = r.id), r.continues, "
    "(SELECT GROUP_CONCAT(c.id) FROM runs c WHERE c.continues = r.id) FROM runs r";

static RunInfo runFromQuery(const QSqlQuery& q) {
    RunInfo r;
    r.id = q.value(0).toLongLong();
    r.name = q.value(1).toString();
    r.status = q.value(2).toString();
    r.created = fromIso(q.value(3));
    r.finished = fromIso(q.value(4));
    r.device = q.value(5).toString();
    r.error = q.value(6).toString();
    r.spec = jsonObject(q.value(7));
    r.config = jsonObject(q.value(8));
    r.finalMetrics = jsonObject(q.value(9));
    r.stepCount = q.value(10).toLongLong();
    r.modelName = r.spec.value(QStringLiteral("name")).toString();
    r.data = r.config.value(QStringLiteral("data")).toString();
    r.outDir = r.config.value(QStringLiteral("out_dir")).toString();
    r.continuesRunId = q.value(11).isNull() ? 0 : q.value(11).toLongLong();
    for (const QString& id : q.value(12).toString().split(QLatin1Char(','), Qt::SkipEmptyParts))
        r.continuedBy << id.toLongLong();
    std::sort(r.continuedBy.begin(), r.continuedBy.end());
    return r;
}

QVector<RunInfo> RunStore::listRuns(const RunFilter& f) const {
    QVector<RunInfo> out;
    if (!isOpen()) return out;
    QString sql = QString::fromLatin1(kRunColumns);
    QStringList where;
    QVariantList binds;
    if (!f.statuses.isEmpty()) {
        QStringList marks;
        for (const QString& s : f.statuses) {
            marks << QStringLiteral("?");
            binds << s;
        }
        where << QStringLiteral("r.status IN (%1)").arg(marks.join(QLatin1Char(',')));
    }
    if (f.since.isValid()) {
        where << QStringLiteral("r.created >= ?");
        binds << f.since.toUTC().toString(Qt::ISODateWithMs);
    }
    if (f.until.isValid()) {
        where << QStringLiteral("r.created <= ?");
        binds << f.until.toUTC().toString(Qt::ISODateWithMs);
    }
    if (!where.isEmpty()) sql += QStringLiteral(" WHERE ") + where.join(QStringLiteral(" AND "));
    sql += QStringLiteral(" ORDER BY r.id DESC");
    QSqlQuery q(db());
    q.prepare(sql);
    for (const QVariant& b : binds) q.addBindValue(b);
    if (!q.exec()) {
        fail(q.lastError().text());
        return out;
    }
    while (q.next()) {
        RunInfo r = runFromQuery(q);
        if (!f.text.isEmpty()) {
            const QString hay = r.name + QLatin1Char('\n') + r.modelName + QLatin1Char('\n') + r.data +
                                QLatin1Char('\n') + r.device;
            if (!hay.contains(f.text, Qt::CaseInsensitive)) continue;
        }
        out.push_back(std::move(r));
        if (f.limit > 0 && out.size() >= f.limit) break;
    }
    return out;
}

std::optional<RunInfo> RunStore::run(qint64 runId) const {
    if (!isOpen()) return std::nullopt;
    QSqlQuery q(db());
    q.prepare(QString::fromLatin1(kRunColumns) + QStringLiteral(" WHERE r.id = ?"));
    q.addBindValue(runId);
    if (!q.exec() || !q.next()) return std::nullopt;
    return runFromQuery(q);
}

bool RunStore::setContinues(qint64 runId, qint64 continuedRunId) {
    if (!run(runId) || (continuedRunId > 0 && !run(continuedRunId)) || runId == continuedRunId) {
        fail(QCoreApplication::translate("RunStore", "There is no run %1.").arg(run(runId) ? continuedRunId : runId));
        return false;
    }
    if (!exec(QStringLiteral("UPDATE runs SET continues = ? WHERE id = ?"),
              {continuedRunId > 0 ? QVariant(continuedRunId) : QVariant(QMetaType(QMetaType::LongLong)), runId}))
        return false;
    emit runsChanged();
    return true;
}

qint64 RunStore::newestRunInFolder(const QString& outDir) const {
    if (!isOpen() || outDir.isEmpty()) return 0;
    const QString want = QDir::cleanPath(QDir(outDir).absolutePath());
    QSqlQuery q(db());
    q.prepare(QStringLiteral("SELECT id, config FROM runs ORDER BY id DESC"));
    if (!q.exec()) return 0;
    while (q.next()) {
        const QString dir = jsonObject(q.value(1)).value(QStringLiteral("out_dir")).toString();
        if (!dir.isEmpty() && QDir::cleanPath(QDir(dir).absolutePath()) == want) return q.value(0).toLongLong();
    }
    return 0;
}

bool RunStore::renameRun(qint64 runId, const QString& name) {
    const QString n = name.trimmed();
    if (n.isEmpty()) {
        fail(QCoreApplication::translate("RunStore", "A run's name cannot be empty."));
        return false;
    }
    if (!run(runId)) {
        fail(QCoreApplication::translate("RunStore", "There is no run %1.").arg(runId));
        return false;
    }
    if (!exec(QStringLiteral("UPDATE runs SET name = ? WHERE id = ?"), {n, runId})) return false;
    emit runsChanged();
    return true;
}

bool RunStore::deleteRun(qint64 runId) {
    if (!run(runId)) {
        fail(QCoreApplication::translate("RunStore", "There is no run %1.").arg(runId));
        return false;
    }
    flush();
    QSqlDatabase d = db();
    d.transaction();
    bool ok = true;
    for (const char* t : {"step_metrics", "epoch_metrics", "telemetry", "memory", "memory_samples"})
        ok = ok && exec(QStringLiteral("DELETE FROM %1 WHERE run_id = ?").arg(QLatin1String(t)), {runId});
    // a run that continued this one keeps its record; its link is cleared
    ok = ok && exec(QStringLiteral("UPDATE runs SET continues = NULL WHERE continues = ?"), {runId});
    ok = ok && exec(QStringLiteral("DELETE FROM runs WHERE id = ?"), {runId});
    if (!ok) {
        d.rollback();
        return false;
    }
    d.commit();
    emit runsChanged();
    return true;
}

QVector<StepRow> RunStore::steps(qint64 runId) const {
    QVector<StepRow> out;
    if (!isOpen()) return out;
    QSqlQuery q(db());
    q.prepare(QStringLiteral("SELECT step, epoch, loss, accuracy, lr, step_seconds, images_per_second, "
                             "elapsed_seconds, loss_scale, skipped FROM step_metrics WHERE run_id = ? ORDER BY step"));
    q.addBindValue(runId);
    q.exec();
    while (q.next()) {
        StepRow r;
        r.step = q.value(0).toLongLong();
        r.epoch = q.value(1).toInt();
        r.loss = dbl(q.value(2));
        r.accuracy = dbl(q.value(3));
        r.lr = dbl(q.value(4));
        r.stepSeconds = dbl(q.value(5));
        r.imagesPerSecond = dbl(q.value(6));
        r.elapsedSeconds = dbl(q.value(7));
        r.lossScale = dbl(q.value(8));
        r.skipped = q.value(9).toInt() != 0;
        out.push_back(r);
    }
    return out;
}

QVector<EpochRow> RunStore::epochs(qint64 runId) const {
    QVector<EpochRow> out;
    if (!isOpen()) return out;
    QSqlQuery q(db());
    q.prepare(QStringLiteral("SELECT epoch, step, train_loss, train_accuracy, test_loss, test_accuracy, seconds, "
                             "images_per_second FROM epoch_metrics WHERE run_id = ? ORDER BY epoch"));
    q.addBindValue(runId);
    q.exec();
    while (q.next()) {
        EpochRow r;
        r.epoch = q.value(0).toInt();
        r.step = q.value(1).toLongLong();
        r.trainLoss = dbl(q.value(2));
        r.trainAccuracy = dbl(q.value(3));
        r.testLoss = dbl(q.value(4));
        r.testAccuracy = dbl(q.value(5));
        r.seconds = dbl(q.value(6));
        r.imagesPerSecond = dbl(q.value(7));
        out.push_back(r);
    }
    return out;
}

QVector<TelemetryRow> RunStore::telemetry(qint64 runId) const {
    QVector<TelemetryRow> out;
    if (!isOpen()) return out;
    QSqlQuery q(db());
    q.prepare(QStringLiteral("SELECT t, step, gpu, gpu_name, cpu_util, ram_used, ram_total, process_rss, gpu_mem_used, "
                             "gpu_mem_total, power_w, power_limit_w, gpu_util, mem_util, temperature_c, sm_clock_mhz, "
                             "energy_j FROM telemetry WHERE run_id = ? ORDER BY t, gpu"));
    q.addBindValue(runId);
    q.exec();
    while (q.next()) {
        TelemetryRow r;
        r.t = q.value(0).toDouble();
        r.step = i64(q.value(1));
        r.gpu = q.value(2).isNull() ? -1 : q.value(2).toInt();
        r.gpuName = q.value(3).toString();
        r.cpuUtilization = dbl(q.value(4));
        r.ramUsed = i64(q.value(5));
        r.ramTotal = i64(q.value(6));
        r.processRss = i64(q.value(7));
        r.gpuMemoryUsed = i64(q.value(8));
        r.gpuMemoryTotal = i64(q.value(9));
        r.powerWatts = dbl(q.value(10));
        r.powerLimitWatts = dbl(q.value(11));
        r.gpuUtilization = dbl(q.value(12));
        r.memoryUtilization = dbl(q.value(13));
        r.temperatureC = dbl(q.value(14));
        r.smClockMhz = dbl(q.value(15));
        r.energyJoules = dbl(q.value(16));
        out.push_back(r);
    }
    return out;
}

QVector<MemoryCategoryRow> RunStore::memory(qint64 runId) const {
    QVector<MemoryCategoryRow> out;
    if (!isOpen()) return out;
    QHash<QString, MemoryCategoryRow> rows;
    QSqlQuery q(db());
    q.prepare(QStringLiteral("SELECT category, predicted, peak, at_peak FROM memory WHERE run_id = ?"));
    q.addBindValue(runId);
    q.exec();
    while (q.next()) {
        MemoryCategoryRow r;
        r.category = q.value(0).toString();
        r.predicted = i64(q.value(1));
        r.peak = i64(q.value(2));
        r.atPeak = i64(q.value(3));
        rows.insert(r.category, r);
    }
    if (rows.isEmpty()) return out;
    for (hr::MemCategory c : hr::all_categories()) {
        const QString name = QString::fromLatin1(hr::category_name(c));
        MemoryCategoryRow r = rows.value(name);
        r.category = name;
        if (!rows.contains(name)) r.predicted = r.peak = r.atPeak = -1;
        out.push_back(r);
    }
    return out;
}

QVector<MemorySampleRow> RunStore::memorySamples(qint64 runId) const {
    QVector<MemorySampleRow> out;
    if (!isOpen()) return out;
    QSqlQuery q(db());
    q.prepare(QStringLiteral("SELECT t, step, live_total, reserved_free, device_capacity FROM memory_samples "
                             "WHERE run_id = ? ORDER BY t"));
    q.addBindValue(runId);
    q.exec();
    while (q.next()) {
        MemorySampleRow r;
        r.t = q.value(0).toDouble();
        r.step = i64(q.value(1));
        r.liveTotal = q.value(2).toLongLong();
        r.reservedFree = q.value(3).toLongLong();
        r.deviceCapacity = q.value(4).toLongLong();
        out.push_back(r);
    }
    return out;
}

QStringList RunStore::overlayMetrics() {
    return {QStringLiteral("loss"),          QStringLiteral("accuracy"),       QStringLiteral("lr"),
            QStringLiteral("images_per_second"), QStringLiteral("step_seconds"), QStringLiteral("train_loss"),
            QStringLiteral("train_accuracy"), QStringLiteral("test_loss"),     QStringLiteral("test_accuracy"),
            QStringLiteral("epoch_images_per_second")};
}

QVector<RunSeries> RunStore::overlay(const QList<qint64>& runIds, const QString& metric) const {
    QVector<RunSeries> out;
    for (qint64 id : runIds) {
        auto info = run(id);
        if (!info) continue;
        RunSeries s;
        s.runId = id;
        s.runName = info->name;
        if (metric == QLatin1String("loss") || metric == QLatin1String("accuracy") || metric == QLatin1String("lr") ||
            metric == QLatin1String("images_per_second") || metric == QLatin1String("step_seconds")) {
            for (const StepRow& r : steps(id)) {
                double y = metric == QLatin1String("loss")       ? r.loss
                           : metric == QLatin1String("accuracy") ? r.accuracy
                           : metric == QLatin1String("lr")       ? r.lr
                           : metric == QLatin1String("images_per_second") ? r.imagesPerSecond
                                                                         : r.stepSeconds;
                s.x << static_cast<double>(r.step);
                s.y << y;
            }
        } else {
            for (const EpochRow& r : epochs(id)) {
                double y = metric == QLatin1String("train_loss")       ? r.trainLoss
                           : metric == QLatin1String("train_accuracy") ? r.trainAccuracy
                           : metric == QLatin1String("test_loss")      ? r.testLoss
                           : metric == QLatin1String("test_accuracy")  ? r.testAccuracy
                                                                       : r.imagesPerSecond;
                s.x << r.epoch;
                s.y << y;
            }
        }
        out.push_back(std::move(s));
    }
    return out;
}

}  // namespace hrapp
