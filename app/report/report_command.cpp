#include "report/report_command.h"

#include <QApplication>
#include <QCoreApplication>
#include <QDir>
#include <QFileInfo>
#include <QLocale>
#include <QTranslator>

#include <cstdio>
#include <memory>

#include "gui/Installation.h"
#include "report/report_writer.h"
#include "store/run_store.h"

namespace hrapp {
namespace {


void eprint(const QString& s) {
    const QByteArray b = s.toLocal8Bit();
    std::fwrite(b.constData(), 1, b.size(), stderr);
    std::fflush(stderr);
}
void print(const QString& s) {
    const QByteArray b = s.toLocal8Bit();
    std::fwrite(b.constData(), 1, b.size(), stdout);
    std::fflush(stdout);
}

// Makes sure a QApplication exists for QCustomPlot; returns the one it created (or null).
std::unique_ptr<QApplication> ensureApplication() {
    if (QCoreApplication::instance()) return nullptr;
    if (qEnvironmentVariableIsEmpty("QT_QPA_PLATFORM") && qEnvironmentVariableIsEmpty("DISPLAY") &&
        qEnvironmentVariableIsEmpty("WAYLAND_DISPLAY"))
        qputenv("QT_QPA_PLATFORM", "offscreen");
    static int argc = 1;
    static char name[] = "headroom";
    static char* argv[] = {name, nullptr};
    auto app = std::make_unique<QApplication>(argc, argv);
    QCoreApplication::setApplicationName(QStringLiteral("Headroom"));
    QCoreApplication::setOrganizationName(QStringLiteral("Headroom"));
    static QTranslator translator;
    for (const QString& share : shareDirs())  // an installed or build-tree copy first, then the compiled-in one
        if (translator.load(QLocale(), QStringLiteral("headroom"), QStringLiteral("_"), share + QStringLiteral("/headroom/translations")))
            break;
    if (!translator.isEmpty() ||
        translator.load(QLocale(), QStringLiteral("headroom"), QStringLiteral("_"), QStringLiteral(":/i18n")))
        app->installTranslator(&translator);
    return app;
}

struct Options {
    QString run;
    QString format;
    QString out;
    QString db;
    QString status;
    QString filter;
    int limit = 0;
};

// Parses --key value / --key=value pairs; positional args go to `positional`. Returns an error or "".
QString parseArgs(const QStringList& args, const QStringList& keys, QHash<QString, QString>* values,
                  QStringList* positional) {
    for (int i = 0; i < args.size(); ++i) {
        const QString& a = args[i];
        if (a.startsWith(QLatin1String("--"))) {
            QString key = a.mid(2), value;
            const int eq = key.indexOf(QLatin1Char('='));
            if (eq >= 0) {
                value = key.mid(eq + 1);
                key = key.left(eq);
            } else {
                if (!keys.contains(key)) return QCoreApplication::translate("ReportCommand", "unknown option '%1'").arg(a);
                if (i + 1 >= args.size()) return QCoreApplication::translate("ReportCommand", "option '%1' needs a value").arg(a);
                value = args[++i];
            }
            if (!keys.contains(key)) return QCoreApplication::translate("ReportCommand", "unknown option '--%1'").arg(key);
            values->insert(key, value);
        } else {
            positional->push_back(a);
        }
    }
    return {};
}

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

int run_report_command(const QStringList& args) {
    auto app = ensureApplication();
    QHash<QString, QString> v;
    QStringList pos;
    const QString usage = QCoreApplication::translate("ReportCommand", "usage: headroom report RUN [--format html|pdf|json|csv] [--out FILE] [--db FILE]\n"
                             "RUN is a run id, 'last', or a run's name (see headroom runs).\n");
    if (args.contains(QLatin1String("--help")) || args.contains(QLatin1String("-h"))) {
        print(usage);
        return 0;
    }
    const QString err = parseArgs(args, {QStringLiteral("format"), QStringLiteral("out"), QStringLiteral("db")}, &v, &pos);
    if (!err.isEmpty()) {
        eprint(QCoreApplication::translate("ReportCommand", "headroom report: %1\n").arg(err) + usage);
        return 2;
    }
    if (pos.size() != 1) {
        eprint(QCoreApplication::translate("ReportCommand", "headroom report: give exactly one run\n") + usage);
        return 2;
    }
    std::optional<ReportWriter::Format> format;
    if (v.contains(QStringLiteral("format"))) {
        format = ReportWriter::formatFromName(v.value(QStringLiteral("format")));
        if (!format) {
            eprint(QCoreApplication::translate("ReportCommand", "headroom report: unknown format '%1'; use html, pdf, json or csv\n")
                       .arg(v.value(QStringLiteral("format"))));
            return 2;
        }
    }
    QString out = v.value(QStringLiteral("out"));
    if (!format) {
        format = ReportWriter::formatFromName(QFileInfo(out).suffix());
        if (!format) format = ReportWriter::Format::Html;
    }
    const QString dbPath = v.value(QStringLiteral("db"));
    if (!dbPath.isEmpty() && !QFileInfo::exists(dbPath)) {
        eprint(QCoreApplication::translate("ReportCommand", "headroom report: there is no run history at %1\n").arg(dbPath));
        return 2;
    }
    RunStore store;
    if (!store.open(dbPath)) {
        eprint(QCoreApplication::translate("ReportCommand", "headroom report: %1\n").arg(store.lastError()));
        return 1;
    }
    const auto id = resolveRun(store, pos.first());
    if (!id) {
        eprint(QCoreApplication::translate("ReportCommand", "headroom report: no run '%1' in %2; list the runs with: headroom runs\n")
                   .arg(pos.first(), store.path()));
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

int run_runs_command(const QStringList& args) {
    auto app = ensureApplication();
    QHash<QString, QString> v;
    QStringList pos;
    const QString usage = QCoreApplication::translate("ReportCommand", "usage: headroom runs [--status running,finished,failed,stopped] [--filter TEXT] "
                             "[--limit N] [--db FILE]\n");
    if (args.contains(QLatin1String("--help")) || args.contains(QLatin1String("-h"))) {
        print(usage);
        return 0;
    }
    const QString err = parseArgs(args, {QStringLiteral("status"), QStringLiteral("filter"), QStringLiteral("limit"),
                                         QStringLiteral("db")},
                                  &v, &pos);
    if (!err.isEmpty() || !pos.isEmpty()) {
        eprint(QCoreApplication::translate("ReportCommand", "headroom runs: %1\n").arg(err.isEmpty() ? QCoreApplication::translate("ReportCommand", "unexpected argument '%1'").arg(pos.first()) : err) +
               usage);
        return 2;
    }
    RunFilter f;
    f.text = v.value(QStringLiteral("filter"));
    if (v.contains(QStringLiteral("status"))) {
        for (const QString& s : v.value(QStringLiteral("status")).split(QLatin1Char(','), Qt::SkipEmptyParts)) {
            const QString st = s.trimmed().toLower();
            if (st != QLatin1String("running") && st != QLatin1String("finished") && st != QLatin1String("failed") &&
                st != QLatin1String("stopped")) {
                eprint(QCoreApplication::translate("ReportCommand", "headroom runs: unknown status '%1'; use running, finished, failed or stopped\n").arg(s));
                return 2;
            }
            f.statuses << st;
        }
    }
    if (v.contains(QStringLiteral("limit"))) {
        bool ok = false;
        f.limit = v.value(QStringLiteral("limit")).toInt(&ok);
        if (!ok || f.limit < 0) {
            eprint(QCoreApplication::translate("ReportCommand", "headroom runs: --limit must be a whole number of 0 or more\n"));
            return 2;
        }
    }
    const QString dbPath = v.value(QStringLiteral("db"));
    if (!dbPath.isEmpty() && !QFileInfo::exists(dbPath)) {
        eprint(QCoreApplication::translate("ReportCommand", "headroom runs: there is no run history at %1\n").arg(dbPath));
        return 2;
    }
    RunStore store;
    if (!store.open(dbPath)) {
        eprint(QCoreApplication::translate("ReportCommand", "headroom runs: %1\n").arg(store.lastError()));
        return 1;
    }
    const auto runs = store.listRuns(f);
    if (runs.isEmpty()) {
        print(QCoreApplication::translate("ReportCommand", "No runs in %1.\n").arg(store.path()));
        return 0;
    }
    QString table = QStringLiteral("%1  %2  %3  %4  %5\n")
                        .arg(QCoreApplication::translate("ReportCommand", "ID"), 5)
                        .arg(QCoreApplication::translate("ReportCommand", "STATUS"), -9)
                        .arg(QCoreApplication::translate("ReportCommand", "STARTED"), -16)
                        .arg(QCoreApplication::translate("ReportCommand", "TEST ACC"), 8)
                        .arg(QCoreApplication::translate("ReportCommand", "NAME"));
    for (const RunInfo& r : runs) {
        const QJsonValue acc = r.finalMetrics.value(QStringLiteral("test_accuracy"));
        table += QStringLiteral("%1  %2  %3  %4  %5\n")
                     .arg(r.id, 5)
                     .arg(r.status, -9)
                     .arg(r.created.toLocalTime().toString(QStringLiteral("yyyy-MM-dd HH:mm")), -16)
                     .arg(acc.isDouble() ? QString::number(acc.toDouble(), 'f', 4) : QStringLiteral("-"), 8)
                     .arg(r.name);
    }
    print(table);
    return 0;
}

}  // namespace hrapp
