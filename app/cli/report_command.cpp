#include "cli/report_command.h"

#include <QCoreApplication>
#include <QDir>
#include <QFileInfo>

#include <optional>

#include "cli/output.h"
#include "report/report_writer.h"
#include "store/run_store.h"

namespace hrapp {
namespace {


std::optional<qint64> resolveRun(const RunStore& store, const QString& spec) {
    if (spec.compare(QLatin1String("last"), Qt::CaseInsensitive) == 0 ||
        spec.compare(QLatin1String("latest"), Qt::CaseInsensitive) == 0) {
        RunFilter f;
        f.limit = 1;
        const auto runs = store.listRuns(f);
        if (runs.isEmpty()) return std::nullopt;
        return runs.first().id;
    }
    bool ok = false;
    const qint64 id = spec.toLongLong(&ok);
    if (ok && store.run(id)) return id;
    for (const RunInfo& r : store.listRuns())
        if (r.name == spec) return r.id;
    return std::nullopt;
}

}  // namespace

int run_report_command(const CliRequest& r) {
    std::optional<ReportWriter::Format> format;
    if (!r.format.isEmpty()) format = ReportWriter::formatFromName(r.format);  // the parser checked the name
    QString out = r.out;
    if (!format) {
        format = ReportWriter::formatFromName(QFileInfo(out).suffix());
        if (!format) format = ReportWriter::Format::Html;
    }
    const QString& spec = r.positional.first();
    const QString dbPath = r.db;
    if (!dbPath.isEmpty() && !QFileInfo::exists(dbPath)) {
        eprint(QCoreApplication::translate("ReportCommand", "headroom report: there is no run history at %1\n").arg(dbPath));
        return 2;
    }
    RunStore store;
    if (!store.open(dbPath)) {
        eprint(QCoreApplication::translate("ReportCommand", "headroom report: %1\n").arg(store.lastError()));
        return 1;
    }
    const auto id = resolveRun(store, spec);
    if (!id) {
        eprint(QCoreApplication::translate("ReportCommand", "headroom report: no run '%1' in %2; list the runs with: headroom runs\n")
                   .arg(spec, store.path()));
        return 2;
    }
    if (out.isEmpty()) out = QStringLiteral("headroom-run-%1.%2").arg(*id).arg(ReportWriter::extension(*format));
    const QFileInfo outInfo(out);
    if (outInfo.isDir()) {
        eprint(QCoreApplication::translate("ReportCommand", "headroom report: --out %1 is a folder; give a file name\n").arg(out));
        return 2;
    }
    const QFileInfo dirInfo(outInfo.absolutePath());
    if (!dirInfo.isDir() || !dirInfo.isWritable()) {
        eprint(QCoreApplication::translate("ReportCommand", "headroom report: cannot write %1: the folder %2 does not exist or is not writable\n")
                   .arg(out, outInfo.absolutePath()));
        return 2;
    }
    auto data = ReportWriter::load(store, *id);
    if (!data) {
        eprint(QCoreApplication::translate("ReportCommand", "headroom report: run %1 could not be read\n").arg(*id));
        return 1;
    }
    ReportWriter writer(std::move(*data));
    QString error;
    if (!writer.write(out, *format, &error)) {
        eprint(QCoreApplication::translate("ReportCommand", "headroom report: %1\n").arg(error));
        return 2;
    }
    print(QFileInfo(out).absoluteFilePath() + QLatin1Char('\n'));
    return 0;
}

}  // namespace hrapp
