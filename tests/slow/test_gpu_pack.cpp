// The GPU machine's pack (scripts/package --gpu-check, scripts/pack-gpu-check): made from this build tree,
// under 64 MiB, with the programs gpu-check runs and the libraries they load (ldd's and the dlopen()ed
// OpenBLAS and libmpi); its run.sh started from a clean folder that has nothing but the pack: it says which
// NVIDIA libraries are missing and still starts the packed `headroom`, whose own libraries (Qt, OpenBLAS)
// come from the pack. Then the same with the CUDA toolkit's folder hidden (a private mount namespace, as
// root): nothing of the toolkit is on the library path, the program still starts and says why CUDA cannot
// be used. Then the GPU call itself rehearsed (issue 43): a copy of the tree with the pack, as the GPU machine
// gets it, runs `bash .devpack/run.sh scripts/gpu-check OUT` with a short DEADLINE, finishes inside it, writes
// at most 8 files, a results line for every planned check (a skipped one with its reason), and the pack with
// the tree stays under 64 MiB; every step in CHECKS' order and inside the deadline, a step that would pass it
// skipped with its reason (a second call with DEADLINE 40); the findings of run.sh in OUT/env.txt, the log
// appended to, and the figures read despite a broken libsqlite3 and libexpat on the machine's library path
// (issue 54). Nothing is written into the source tree.
#include <QtTest>
#include "test_support.h"

#include <QElapsedTimer>
#include <QJsonDocument>
#include <QJsonObject>
#include <QRegularExpression>

#include <QDateTime>
#include <QDir>
#include <QFile>
#include <QFileInfo>
#include <QProcess>
#include <QTemporaryDir>

namespace {

struct Result {
    int code = -1;
    QString out;
};

Result run(const QString& program, const QStringList& args, const QProcessEnvironment& env, int timeoutMs = 240000) {
    QProcess p;
    p.setProcessEnvironment(env);
    p.setProcessChannelMode(QProcess::MergedChannels);
    p.start(program, args);
    Result r;
    if (!p.waitForFinished(timeoutMs)) {
        p.kill();
        p.waitForFinished();
        r.out = QStringLiteral("timed out: %1 %2").arg(program, args.join(' '));
        return r;
    }
    r.code = p.exitStatus() == QProcess::NormalExit ? p.exitCode() : -1;
    r.out = QString::fromUtf8(p.readAll());
    return r;
}

}  // namespace

class GpuPackTest : public QObject {
    Q_OBJECT

    QTemporaryDir tmp_;
    QString checkout_;  // a clean folder holding only the pack (as a GPU machine gets it)

    QProcessEnvironment clean_env(const QString& unpack) const {
        QProcessEnvironment env = QProcessEnvironment::systemEnvironment();
        env.remove(QStringLiteral("LD_LIBRARY_PATH"));
        env.remove(QStringLiteral("HEADROOM_CUDA_MODULE"));
        env.insert(QStringLiteral("HEADROOM_DEVPACK_DIR"), unpack);
        return env;
    }

    // The tree as a GPU call copies it (what git tracks or would track) and the pack, once: both rehearsals'.
    QString tree_with_pack() {
        const QString tree = tmp_.filePath(QStringLiteral("tree"));
        if (QFileInfo::exists(tree + QStringLiteral("/.devpack/run.sh"))) return tree;
        if (!QDir().mkpath(tree)) return {};
        const QString copy = QStringLiteral("cd '%1' && git ls-files -z -c -o --exclude-standard | tar -cf - --null -T - | "
                                            "tar -C '%2' -xf - && cp -r '%3' '%2/.devpack'")
                                 .arg(hrtest::qsource_path(), tree, checkout_ + QStringLiteral("/.devpack"));
        const Result c = run(QStringLiteral("bash"), {QStringLiteral("-c"), copy}, QProcessEnvironment::systemEnvironment());
        if (c.code != 0) qWarning("%s", qPrintable(c.out));
        return c.code == 0 ? tree : QString();
    }

    // A folder of libraries that break any program that loads them: Python's sqlite3 module (libsqlite3) and
    // the python3 program itself (libexpat), as a machine's own library path might.
    QString broken_libraries() {
        const QString dir = tmp_.filePath(QStringLiteral("broken-libs"));
        QDir().mkpath(dir);
        for (const char* name : {"libsqlite3.so.0", "libexpat.so.1"}) {
            QFile f(dir + QLatin1Char('/') + QLatin1String(name));
            if (f.open(QIODevice::WriteOnly)) f.write("not a library\n");
        }
        return dir;
    }

    struct Call {
        int code = -1;
        double seconds = 0;
        QString output;
        QString out;  // OUT
        QJsonObject call;                // the "kind": "call" line
        QList<QJsonObject> lines;        // every line of results.jsonl
    };

    // bash .devpack/run.sh scripts/gpu-check OUT in a copy of the tree, as the GPU machine runs it
    Call rehearse(const QString& tree, int deadline, const QString& name, const QString& ld_library_path) {
        Call c;
        c.out = tmp_.filePath(name);
        QProcessEnvironment env = clean_env(tmp_.filePath(QStringLiteral("unpack-") + name));
        env.insert(QStringLiteral("DEADLINE"), QString::number(deadline));
        if (!ld_library_path.isEmpty()) env.insert(QStringLiteral("LD_LIBRARY_PATH"), ld_library_path);
        const QString rel = QDir(hrtest::qsource_path()).relativeFilePath(hrtest::qbinary_path());
        env.insert(QStringLiteral("HEADROOM_BUILD_DIR"), tree + QStringLiteral("/") + rel);
        QElapsedTimer clock;
        clock.start();
        const Result r = run(QStringLiteral("bash"), {tree + QStringLiteral("/.devpack/run.sh"), QStringLiteral("scripts/gpu-check"), c.out},
                             env, (deadline + 300) * 1000);
        c.seconds = clock.elapsed() / 1000.0;
        c.code = r.code;
        c.output = r.out;
        qInfo("%s", qPrintable(r.out.right(3000).trimmed()));
        qInfo("the rehearsal: %.1f s with DEADLINE %d", c.seconds, deadline);
        QFile results(c.out + QStringLiteral("/results.jsonl"));
        if (results.open(QIODevice::ReadOnly))
            for (const QByteArray& line : results.readAll().split('\n')) {
                if (line.trimmed().isEmpty()) continue;
                QJsonParseError err{};
                const QJsonObject o = QJsonDocument::fromJson(line, &err).object();
                if (err.error != QJsonParseError::NoError) qWarning("not JSON: %s", line.constData());
                c.lines << o;
                if (o.value(QStringLiteral("kind")).toString() == QLatin1String("call")) c.call = o;
            }
        return c;
    }

    // the check names of scripts/gpu-check's CHECKS, in order
    static QStringList planned_checks(const QString& tree) {
        QFile script(tree + QStringLiteral("/scripts/gpu-check"));
        if (!script.open(QIODevice::ReadOnly)) return {};
        const QString text = QString::fromUtf8(script.readAll());
        const QRegularExpressionMatch m = QRegularExpression(QStringLiteral("\\nCHECKS=\\(\\n([^)]*)\\)")).match(text);
        QStringList planned;
        if (!m.hasMatch()) return planned;
        for (const QString& line : m.captured(1).split('\n', Qt::SkipEmptyParts)) {
            const QString name = line.trimmed().remove('"').section(' ', 0, 0);
            if (!name.isEmpty() && !name.startsWith('#')) planned << name;
        }
        return planned;
    }

    // What every call must show: a line for every planned check in CHECKS' order (one that did not pass says
    // why), every step in that order and inside the deadline (the kill's 5 s grace and a second of rounding),
    // every step not run with its reason.
    static void verify_call(const Call& c, const QStringList& planned) {
        QVERIFY2(!c.call.isEmpty(), "no call line in results.jsonl");
        const qint64 start = c.call.value(QStringLiteral("start")).toInteger();
        const qint64 deadline_at = c.call.value(QStringLiteral("deadline_at")).toInteger();
        QVERIFY(start > 0 && deadline_at > start);
        QStringList checked;
        int last_index = 0, steps = 0;
        for (const QJsonObject& o : c.lines) {
            const QByteArray text = QJsonDocument(o).toJson(QJsonDocument::Compact);
            QVERIFY2(o.contains(QStringLiteral("check")) && o.contains(QStringLiteral("status")), text.constData());
            const QString kind = o.value(QStringLiteral("kind")).toString(), st = o.value(QStringLiteral("status")).toString();
            if (kind == QLatin1String("check")) {
                checked << o.value(QStringLiteral("check")).toString();
                if (st != QLatin1String("pass")) QVERIFY2(!o.value(QStringLiteral("reason")).toString().isEmpty(), text.constData());
                QVERIFY2(o.value(QStringLiteral("t")).toInteger() <= deadline_at, text.constData());
            }
            if (kind != QLatin1String("step")) continue;
            ++steps;
            const int index = static_cast<int>(planned.indexOf(o.value(QStringLiteral("check")).toString()));
            QVERIFY2(index >= last_index, qPrintable(QStringLiteral("a step out of CHECKS' order: ") + QString::fromUtf8(text)));
            last_index = index;
            if (st == QLatin1String("skip")) {
                QVERIFY2(!o.value(QStringLiteral("reason")).toString().isEmpty(), text.constData());
                QVERIFY2(o.value(QStringLiteral("t")).toInteger() <= deadline_at, text.constData());
            } else {
                QVERIFY2(o.value(QStringLiteral("start")).toInteger() >= start, text.constData());
                QVERIFY2(o.value(QStringLiteral("end")).toInteger() <= deadline_at + 6,
                         qPrintable(QStringLiteral("a step ran past the deadline (%1): ").arg(deadline_at) + QString::fromUtf8(text)));
            }
        }
        QCOMPARE(checked, planned);
        QVERIFY2(steps > 0, "no step lines");
        // the call itself (run.sh's unpacking and library checks before it are outside DEADLINE, as on the GPU
        // machine, where they take seconds) ended inside its deadline, its summary included
        QVERIFY2(!c.lines.isEmpty() && c.lines.last().value(QStringLiteral("t")).toInteger() <= deadline_at,
                 "the last line of results.jsonl is past the deadline");
        const QRegularExpressionMatch after = QRegularExpression(QStringLiteral("gpu-check: exit \\d+ after (\\d+) s of DEADLINE (\\d+) s"))
                                                  .match(c.output);
        QVERIFY2(after.hasMatch(), qPrintable(c.output.right(1000)));
        QVERIFY2(after.captured(1).toInt() <= after.captured(2).toInt(), qPrintable(after.captured(0)));
        QFile summary(c.out + QStringLiteral("/summary.txt"));
        QVERIFY(summary.open(QIODevice::ReadOnly));
        QVERIFY(summary.readAll().contains("--- gpu-check: exit"));
    }

private slots:
    void initTestCase() {
        QVERIFY(tmp_.isValid());
        checkout_ = tmp_.filePath(QStringLiteral("checkout"));
        QVERIFY(QDir().mkpath(checkout_ + QStringLiteral("/.devpack")));
        const QString own = hrtest::qsource_path(".devpack/runtime.tar.xz");  // a developer's own pack
        const QDateTime own_before = QFileInfo(own).lastModified();
        QProcessEnvironment env = QProcessEnvironment::systemEnvironment();
        env.insert(QStringLiteral("HEADROOM_PACK_OUT"), checkout_ + QStringLiteral("/.devpack"));
        const Result r = run(QStringLiteral("bash"),
                             {hrtest::qsource_path("scripts/package"), QStringLiteral("--gpu-check"),
                              hrtest::qbinary_path()},
                             env, 900000);  // xz over some 150 MB: minutes on a busy 2-core machine
        qInfo("%s", qPrintable(r.out.trimmed()));
        QVERIFY2(r.code == 0, qPrintable(r.out));
        QCOMPARE(QFileInfo(own).lastModified(), own_before);  // nothing written into the source tree
    }

    void packHoldsTheProgramsAndTheirLibraries() {
        const QString archive = checkout_ + QStringLiteral("/.devpack/runtime.tar.xz");
        const qint64 size = QFileInfo(archive).size();
        QVERIFY2(size > 0 && size < 64ll * 1024 * 1024, qPrintable(QString::number(size)));
        const Result list = run(QStringLiteral("tar"), {QStringLiteral("-tJf"), archive}, QProcessEnvironment::systemEnvironment());
        QCOMPARE(list.code, 0);
        for (const char* f : {"rt/build/headroom", "rt/lib/libQt6Core.so.6", "rt/lib/libopenblas.so.0", "rt/lib/libmpi.so.40",
                              "rt/plugins/platforms/libqoffscreen.so", "rt/plugins/sqldrivers/libqsqlite.so", "rt/needs.txt", "rt/build/CTestTestfile.cmake"})
            QVERIFY2(list.out.contains(QString::fromLatin1(f)), f);
        if (QFileInfo::exists(hrtest::qbinary_path("libheadroom_cuda.so"))) {
            QVERIFY(list.out.contains(QStringLiteral("rt/build/libheadroom_cuda.so")));
            QVERIFY(list.out.contains(QStringLiteral("test_cuda_backend")));
        }
        // the NVIDIA libraries are looked for on arrival, never packed
        for (const char* f : {"libcublas", "libcudnn", "libnccl", "libcuda.so", "libnvidia-ml"})
            QVERIFY2(!list.out.contains(QStringLiteral("rt/lib/") + QString::fromLatin1(f)), f);
    }

    void startsInACleanFolderAndSaysWhatIsMissing() {
        QProcessEnvironment env = clean_env(tmp_.filePath(QStringLiteral("unpack1")));
        QVERIFY(QDir().mkpath(tmp_.filePath(QStringLiteral("nothing"))));
        env.insert(QStringLiteral("HEADROOM_DEVPACK_SEARCH"), tmp_.filePath(QStringLiteral("nothing")));
        const QString rel = QDir(hrtest::qsource_path()).relativeFilePath(hrtest::qbinary_path());
        const Result r = run(QStringLiteral("bash"), {checkout_ + QStringLiteral("/.devpack/run.sh"), rel + QStringLiteral("/headroom"),
                                                      QStringLiteral("devices")},
                             env);
        qInfo("%s", qPrintable(r.out.trimmed()));
        QVERIFY2(r.code == 0, qPrintable(r.out));
        QVERIFY2(r.out.contains(QStringLiteral("run.sh: MISSING libcublas.so.13")), qPrintable(r.out));
        QVERIFY2(r.out.contains(QStringLiteral("run.sh: MISSING libcuda.so.1")), qPrintable(r.out));
        QVERIFY2(r.out.contains(QStringLiteral("cpu      ")), qPrintable(r.out));  // the program ran
        QVERIFY2(r.out.contains(QStringLiteral("cuda     ")), qPrintable(r.out));  // and said about CUDA
        // the packed tree, linked into the clean folder, and its Qt from the pack
        QVERIFY(QFileInfo(checkout_ + QStringLiteral("/") + rel).isSymLink());
        QProcessEnvironment lenv = QProcessEnvironment::systemEnvironment();
        lenv.insert(QStringLiteral("LD_LIBRARY_PATH"), tmp_.filePath(QStringLiteral("unpack1/rt/lib")));
        const Result ldd = run(QStringLiteral("ldd"), {tmp_.filePath(QStringLiteral("unpack1/rt/build/headroom"))}, lenv);
        QVERIFY2(ldd.out.contains(tmp_.filePath(QStringLiteral("unpack1/rt/lib/libQt6Core.so.6"))), qPrintable(ldd.out));
        QVERIFY2(!ldd.out.contains(QStringLiteral("not found")), qPrintable(ldd.out));
    }

    void startsWithoutTheToolkit() {
        if (!QFileInfo::exists(hrtest::qbinary_path("libheadroom_cuda.so")))
            QSKIP("this build has no CUDA module: there is no toolkit to hide");
        if (!QFileInfo::exists(QStringLiteral("/usr/local/cuda"))) QSKIP("no /usr/local/cuda to hide");
        // a private mount namespace with an empty folder over the toolkit (root only; CI runs as root)
        const Result probe = run(QStringLiteral("unshare"), {QStringLiteral("-m"), QStringLiteral("true")},
                                 QProcessEnvironment::systemEnvironment(), 20000);
        if (probe.code != 0) QSKIP(qPrintable(QStringLiteral("unshare -m is not allowed here: ") + probe.out.trimmed()));
        QVERIFY(QDir().mkpath(tmp_.filePath(QStringLiteral("empty"))));
        const QString rel = QDir(hrtest::qsource_path()).relativeFilePath(hrtest::qbinary_path());
        const QString script = QStringLiteral("mount --bind '%1' /usr/local/cuda && exec bash '%2' '%3/headroom' devices")
                                   .arg(tmp_.filePath(QStringLiteral("empty")), checkout_ + QStringLiteral("/.devpack/run.sh"), rel);
        const Result r = run(QStringLiteral("unshare"), {QStringLiteral("-m"), QStringLiteral("bash"), QStringLiteral("-c"), script},
                             clean_env(tmp_.filePath(QStringLiteral("unpack2"))));
        qInfo("%s", qPrintable(r.out.trimmed()));
        QVERIFY2(r.code == 0, qPrintable(r.out));
        // run.sh says what the module cannot find; the program starts and says why CUDA is not used
        QVERIFY2(r.out.contains(QStringLiteral("libheadroom_cuda.so: libcublas.so.13")), qPrintable(r.out));
        QVERIFY2(r.out.contains(QStringLiteral("cpu      ")), qPrintable(r.out));
        QVERIFY2(r.out.contains(QStringLiteral("does not load: libcublas.so.13")), qPrintable(r.out));
    }

    // The GPU call, rehearsed on this machine: the CUDA checks skip (no device) and say why; the budget, the
    // files and the results are what the GPU machine's call will have. The machine's library path holds a
    // broken libsqlite3 and libexpat: the figures still come (gpu_check_tools.py runs without it).
    void rehearsesTheGpuCall() {
        if (!QFileInfo::exists(hrtest::qbinary_path("libheadroom_cuda.so")))
            QSKIP("this build has no CUDA module (built without nvcc): there is no GPU call to rehearse");
        const QString tree = tree_with_pack();
        QVERIFY(!tree.isEmpty());
        const Result du = run(QStringLiteral("du"), {QStringLiteral("-sb"), tree}, QProcessEnvironment::systemEnvironment());
        const qint64 bytes = du.out.section('\t', 0, 0).toLongLong();
        qInfo("the tree and the pack: %.1f MiB", bytes / 1048576.0);
        QVERIFY2(bytes > 0 && bytes < 64ll * 1024 * 1024, qPrintable(du.out));
        QVERIFY2(QFileInfo::exists(tree + QStringLiteral("/.devpack/data/fashion-mnist/t10k-images-idx3-ubyte.gz")) ||
                     !QFileInfo::exists(QStringLiteral("/usr/share/datasets/fashion-mnist")),
                 "the pack holds no Fashion-MNIST although it is installed here");
        QVERIFY2(QFileInfo::exists(tree + QStringLiteral("/.devpack/data/fortunes/computers")) ||
                     !QFileInfo::exists(QStringLiteral("/usr/share/games/fortunes/computers")),
                 "the pack holds no fortunes although they are installed here");

        // an earlier finding in OUT's log stays (the log is appended to)
        const QString name = QStringLiteral("gpu-check-out");
        QVERIFY(QDir().mkpath(tmp_.filePath(name)));
        {
            QFile earlier(tmp_.filePath(name + QStringLiteral("/log.txt")));
            QVERIFY(earlier.open(QIODevice::WriteOnly));
            earlier.write("an earlier finding\n");
        }
        const int deadline = 240;  // the GPU checks skip here at once: this is room for the CUDA test programs to start
        const Call c = rehearse(tree, deadline, name, broken_libraries());
        QVERIFY2(c.code == 0 || c.code == 1, qPrintable(c.output.right(2000)));  // 1: the GPU checks did not pass here
        QVERIFY2(c.seconds < deadline + 150, qPrintable(QString::number(c.seconds)));  // run.sh's unpacking, ldd of the pack

        const QStringList files = QDir(c.out).entryList(QDir::Files | QDir::Dirs | QDir::NoDotAndDotDot);
        QVERIFY2(files.size() <= 8, qPrintable(files.join(' ')));
        for (const char* f : {"results.jsonl", "summary.txt", "log.txt", "env.txt"})
            QVERIFY2(files.contains(QString::fromLatin1(f)), f);
        QFile log(c.out + QStringLiteral("/log.txt"));
        QVERIFY(log.open(QIODevice::ReadOnly));
        QVERIFY2(log.readAll().startsWith("an earlier finding\n"), "log.txt was emptied");
        // run.sh's findings, the loader's view of the CUDA module and the driver's report came back in env.txt
        QFile envf(c.out + QStringLiteral("/env.txt"));
        QVERIFY(envf.open(QIODevice::ReadOnly));
        const QByteArray env = envf.readAll();
        for (const char* s : {"run.sh: MISSING libcuda.so.1", "--- ldd libheadroom_cuda.so", "libcublas.so.13", "--- nvidia-smi -q"})
            QVERIFY2(env.contains(s), s);

        const QStringList planned = planned_checks(tree);
        QVERIFY2(planned.size() >= 10, qPrintable(planned.join(' ')));
        QVERIFY(planned.indexOf(QStringLiteral("timeline")) < planned.indexOf(QStringLiteral("bench")));
        QCOMPARE(planned.last(), QStringLiteral("compile"));
        verify_call(c, planned);
        if (QTest::currentTestFailed()) return;

        // cuda-ops ran CTest's cuda list (this build's own `ctest -N -L cuda`, test_nccl aside), test_cuda_llama
        // first, every program read by gpu_check_tools.py despite the broken library path (its "program" lines)
        const Result ct = run(QStringLiteral("bash"), {QStringLiteral("-c"), QStringLiteral("cd '") + hrtest::qbinary_path() + QStringLiteral("' && ctest -N -L cuda")},
                              QProcessEnvironment::systemEnvironment());
        QStringList want;
        for (const QString& line : ct.out.split('\n')) {
            const QRegularExpressionMatch m = QRegularExpression(QStringLiteral("^\\s*Test\\s+#\\d+: (\\S+)")).match(line);
            if (m.hasMatch() && m.captured(1) != QLatin1String("nccl")) want << QStringLiteral("test_") + m.captured(1);
        }
        QVERIFY2(want.contains(QStringLiteral("test_cuda_llama")), qPrintable(ct.out));
        QStringList stepped, programs;
        for (const QJsonObject& o : c.lines) {
            if (o.value(QStringLiteral("check")).toString() != QLatin1String("cuda-ops")) continue;
            if (o.value(QStringLiteral("kind")).toString() == QLatin1String("step"))
                stepped << o.value(QStringLiteral("step")).toString();
            if (o.value(QStringLiteral("kind")).toString() == QLatin1String("program"))
                programs << QStringLiteral("test_") + o.value(QStringLiteral("test")).toString();
        }
        QVERIFY2(!stepped.isEmpty() && stepped.first() == QLatin1String("test_cuda_llama"), qPrintable(stepped.join(' ')));
        QStringList sorted_stepped = stepped, sorted_want = want;
        sorted_stepped.sort();
        sorted_want.sort();
        QCOMPARE(sorted_stepped, sorted_want);
        programs.sort();
        QCOMPARE(programs, sorted_want);
        QFile summary(c.out + QStringLiteral("/summary.txt"));
        QVERIFY(summary.open(QIODevice::ReadOnly));
        QVERIFY2(summary.readAll().contains("checks (in the order they ran"), "no summary from gpu_check_tools.py");
    }

    // A short DEADLINE: what would run past it is not started, and says so; the call still ends inside it.
    void skipsWhatWouldPassTheDeadline() {
        if (!QFileInfo::exists(hrtest::qbinary_path("libheadroom_cuda.so")))
            QSKIP("this build has no CUDA module (built without nvcc): there is no GPU call to rehearse");
        const QString tree = tree_with_pack();
        QVERIFY(!tree.isEmpty());
        const int deadline = 40;
        const Call c = rehearse(tree, deadline, QStringLiteral("gpu-check-short"), QString());
        QCOMPARE(c.code, 1);
        QVERIFY2(c.seconds < deadline + 150, qPrintable(QString::number(c.seconds)));
        verify_call(c, planned_checks(tree));
        if (QTest::currentTestFailed()) return;
        int no_time = 0;
        for (const QJsonObject& o : c.lines)
            if (o.value(QStringLiteral("kind")).toString() == QLatin1String("step") &&
                o.value(QStringLiteral("status")).toString() == QLatin1String("skip") &&
                o.value(QStringLiteral("reason")).toString().startsWith(QLatin1String("no time")))
                ++no_time;
        QVERIFY2(no_time > 0, "no step was skipped for lack of time under DEADLINE 40");
        // the devices check had under 5 s of the budget: skipped with the reason, as every check that had no time
        for (const QJsonObject& o : c.lines)
            if (o.value(QStringLiteral("kind")).toString() == QLatin1String("check") &&
                o.value(QStringLiteral("check")).toString() == QLatin1String("devices"))
                QVERIFY2(o.value(QStringLiteral("reason")).toString().startsWith(QLatin1String("no time")),
                         qPrintable(QJsonDocument(o).toJson(QJsonDocument::Compact)));
    }

    // gpu_check_tools.py itself under a library path whose libsqlite3 is broken: every figure but the history's
    // comes, and the history's line says why it is missing
    void toolsSurviveABrokenSqlite() {
        const QString dir = tmp_.filePath(QStringLiteral("broken-sqlite"));
        QVERIFY(QDir().mkpath(dir));
        {
            QFile f(dir + QStringLiteral("/libsqlite3.so.0"));
            QVERIFY(f.open(QIODevice::WriteOnly));
            f.write("not a library\n");
            QFile db(dir + QStringLiteral("/history.sqlite"));
            QVERIFY(db.open(QIODevice::WriteOnly));
            QVERIFY(QDir().mkpath(dir + QStringLiteral("/run")));
            QFile rj(dir + QStringLiteral("/run/run.json"));
            QVERIFY(rj.open(QIODevice::WriteOnly));
            rj.write(R"({"status": "finished", "final": {"steps": 3, "test_loss": 1.5}})");
        }
        QProcessEnvironment env = QProcessEnvironment::systemEnvironment();
        env.insert(QStringLiteral("LD_LIBRARY_PATH"), dir);
        const Result probe = run(QStringLiteral("python3"), {QStringLiteral("-c"), QStringLiteral("import sqlite3")}, env);
        if (probe.code == 0) QSKIP("this Python's sqlite3 does not load libsqlite3 from the library path (built in?)");
        const Result r = run(QStringLiteral("python3"),
                             {hrtest::qsource_path("scripts/gpu_check_tools.py"), QStringLiteral("run"), QStringLiteral("train"),
                              QStringLiteral("x"), dir + QStringLiteral("/run"), QStringLiteral("/nonexistent"), QStringLiteral("1"),
                              QStringLiteral("2"), dir + QStringLiteral("/history.sqlite"), dir + QStringLiteral("/telemetry.jsonl")},
                             env);
        QVERIFY2(r.code == 0, qPrintable(r.out));
        const QJsonObject o = QJsonDocument::fromJson(r.out.trimmed().toUtf8()).object();
        QCOMPARE(o.value(QStringLiteral("status")).toString(), QStringLiteral("pass"));
        QCOMPARE(o.value(QStringLiteral("test_loss")).toDouble(), 1.5);
        QVERIFY2(o.value(QStringLiteral("telemetry_status")).toString().contains(QStringLiteral("sqlite3 does not load")), qPrintable(r.out));
    }
};

QTEST_GUILESS_MAIN(GpuPackTest)
#include "test_gpu_pack.moc"
