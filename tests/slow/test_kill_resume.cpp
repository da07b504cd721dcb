// A training process killed with SIGKILL mid-run (issue 13), after its first checkpoint: the history
// (the OS's view: the process is gone) marks the run failed, every file in the run folder is complete
// (config.json and each checkpoint parse, temporary names are only AtomicFile's, run.json is absent),
// and `headroom train --resume DIR` completes the run from its newest checkpoint: run.json then says it
// was resumed from that step and has the new total of steps.
#include <QDir>
#include <QElapsedTimer>
#include <QJsonDocument>
#include <QJsonObject>
#include <QProcess>
#include <QThread>
#include <QtTest>

#include <signal.h>

#include <filesystem>
#include <fstream>

#include "base/atomic_file.h"
#include "io/safetensors.h"
#include "test_support.h"
#include "train/resume.h"

namespace fs = std::filesystem;

class KillResumeTest : public QObject {
    Q_OBJECT

    QString exe() const { return hrtest::qbinary_path("headroom"); }

private slots:
    void killThenResume() {
        const QString dir = QString::fromStdString(hrtest::temp_dir("kill-resume"));
        const QString run = dir + "/run", db = dir + "/history.db";
        QProcess p;
        p.setProcessChannelMode(QProcess::MergedChannels);
        p.start(exe(), {"train", "--preset", "seed-cnn", "--data", "synthetic", "--train-limit", "512", "--batch", "16",
                        "--steps", "100000", "--threads", "1", "--device", "cpu", "--save-every", "3", "--db", db,
                        "--out", run});
        QVERIFY(p.waitForStarted());
        // wait for the second checkpoint, then kill at once (mid-run, maybe mid-write)
        QElapsedTimer t;
        t.start();
        int seen = 0;
        while (t.elapsed() < 120000 && p.state() == QProcess::Running) {
            seen = 0;
            for (const QString& f : QDir(run).entryList({"checkpoint-*.json"}, QDir::Files)) (void)f, ++seen;
            if (seen >= 2) break;
            QThread::msleep(20);
        }
        QVERIFY2(seen >= 2, qPrintable(QString::fromUtf8(p.readAll())));
        QCOMPARE(::kill(static_cast<pid_t>(p.processId()), SIGKILL), 0);
        QVERIFY(p.waitForFinished(10000));
        QCOMPARE(p.exitStatus(), QProcess::CrashExit);

        // the folder: no run.json, config.json and every checkpoint complete, only AtomicFile temporaries
        QVERIFY(!fs::exists(run.toStdString() + "/run.json"));
        QVERIFY(!fs::exists(run.toStdString() + "/model.safetensors"));
        for (const auto& e : fs::directory_iterator(run.toStdString())) {
            const std::string n = e.path().filename().string();
            if (hr::is_atomic_temp_name(n)) continue;  // a write the kill interrupted: never a final name
            if (n == "config.json") {
                QVERIFY_THROWS_NO_EXCEPTION(hr::read_run_config(run.toStdString()));
            } else if (n.size() > 5 && n.substr(n.size() - 5) == ".json") {
                std::ifstream f(e.path());
                std::string text((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
                QVERIFY_THROWS_NO_EXCEPTION(hr::parse_checkpoint_json(text, n));
                const std::string st = e.path().string().substr(0, e.path().string().size() - 5) + ".safetensors";
                QVERIFY_THROWS_NO_EXCEPTION(hr::read_safetensors(st));
            } else if (n.size() > 12 && n.substr(n.size() - 12) == ".safetensors") {
                QVERIFY_THROWS_NO_EXCEPTION(hr::read_safetensors(e.path().string()));
            } else {
                QFAIL(("unexpected file " + n).c_str());
            }
        }
        const hr::Checkpoint last = hr::read_latest_checkpoint(run.toStdString());
        QVERIFY(last.cursor.step >= 6);

        // the history: the run is failed (its process is gone)
        QProcess h;
        h.start(exe(), {"runs", "--db", db, "--status", "failed"});
        QVERIFY(h.waitForFinished(30000));
        QVERIFY2(QString::fromUtf8(h.readAllStandardOutput()).contains(QStringLiteral("seed-cnn")),
                 "the killed run is not listed as failed");

        // resume to 10 steps past the checkpoint; another model flag is refused, nothing written
        QProcess refused;
        refused.start(exe(), {"train", "--resume", run, "--lr", "0.5", "--no-history"});
        QVERIFY(refused.waitForFinished(30000));
        QCOMPARE(refused.exitCode(), 2);
        QVERIFY(QString::fromUtf8(refused.readAllStandardError()).contains(QStringLiteral("--lr")));
        const std::int64_t total = last.cursor.step + 10;
        QProcess r;
        r.start(exe(), {"train", "--resume", run, "--steps", QString::number(total), "--db", db});
        QVERIFY(r.waitForFinished(300000));
        QVERIFY2(r.exitCode() == 0, qPrintable(QString::fromUtf8(r.readAllStandardError())));
        QFile f(run + "/run.json");
        QVERIFY(f.open(QIODevice::ReadOnly));
        const QJsonObject j = QJsonDocument::fromJson(f.readAll()).object();
        QCOMPARE(j["final"].toObject()["steps"].toInteger(), static_cast<qint64>(total));
        QCOMPARE(j["resume"].toObject()["resumed_from_step"].toInteger(), static_cast<qint64>(last.cursor.step));
        QVERIFY(fs::exists(run.toStdString() + "/model.safetensors"));

        // the history links the resumed run to the killed one (the newest run recorded with that folder)
        QProcess listed;
        listed.start(exe(), {"runs", "--db", db});
        QVERIFY(listed.waitForFinished(30000));
        const QStringList lines = QString::fromUtf8(listed.readAllStandardOutput()).split('\n', Qt::SkipEmptyParts);
        QVERIFY2(lines.size() == 3, qPrintable(lines.join('\n')));  // the header, the resumed run, the killed one
        const QString resumedId = lines[1].trimmed().section(' ', 0, 0), killedId = lines[2].trimmed().section(' ', 0, 0);
        QVERIFY2(lines[1].contains("finished") && lines[1].contains("(continues #" + killedId + ")"), qPrintable(lines[1]));
        QVERIFY2(lines[2].contains("failed") && lines[2].contains("(continued in #" + resumedId + ")"), qPrintable(lines[2]));
    }
};

QTEST_GUILESS_MAIN(KillResumeTest)
#include "test_kill_resume.moc"
