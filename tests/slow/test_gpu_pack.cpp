// The GPU machine's pack (scripts/package --gpu-check, scripts/pack-gpu-check): made from this build tree,
// under 64 MiB, with the programs gpu-check runs and the libraries they load (ldd's and the dlopen()ed
// OpenBLAS and libmpi); its run.sh started from a clean folder that has nothing but the pack: it says which
// NVIDIA libraries are missing and still starts the packed `headroom`, whose own libraries (Qt, OpenBLAS)
// come from the pack. Then the same with the CUDA toolkit's folder hidden (a private mount namespace, as
// root): nothing of the toolkit is on the library path, the program still starts and says why CUDA cannot
// be used. Then the GPU call itself rehearsed (issue 43): a copy of the tree with the pack, as the GPU machine
// gets it, runs `bash .devpack/run.sh scripts/gpu-check OUT` with a short DEADLINE, finishes inside it, writes
// at most 8 files, a results line for every planned check (a skipped one with its reason), and the pack with
// the tree stays under 64 MiB. Nothing is written into the source tree.
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
    // files and the results are what the GPU machine's call will have.
    void rehearsesTheGpuCall() {
        if (!QFileInfo::exists(hrtest::qbinary_path("libheadroom_cuda.so")))
            QSKIP("this build has no CUDA module (built without nvcc): there is no GPU call to rehearse");
        // the tree as a GPU call copies it (what git tracks or would track), and the pack
        const QString tree = tmp_.filePath(QStringLiteral("tree"));
        QVERIFY(QDir().mkpath(tree));
        const QString copy = QStringLiteral("cd '%1' && git ls-files -z -c -o --exclude-standard | tar -cf - --null -T - | "
                                            "tar -C '%2' -xf - && cp -r '%3' '%2/.devpack'")
                                 .arg(hrtest::qsource_path(), tree, checkout_ + QStringLiteral("/.devpack"));
        const Result c = run(QStringLiteral("bash"), {QStringLiteral("-c"), copy}, QProcessEnvironment::systemEnvironment());
        QVERIFY2(c.code == 0, qPrintable(c.out));
        const Result du = run(QStringLiteral("du"), {QStringLiteral("-sb"), tree}, QProcessEnvironment::systemEnvironment());
        const qint64 bytes = du.out.section('\t', 0, 0).toLongLong();
        qInfo("the tree and the pack: %.1f MiB", bytes / 1048576.0);
        QVERIFY2(bytes > 0 && bytes < 64ll * 1024 * 1024, qPrintable(du.out));
        QVERIFY2(QFileInfo::exists(tree + QStringLiteral("/.devpack/data/fashion-mnist/t10k-images-idx3-ubyte.gz")) ||
                     !QFileInfo::exists(QStringLiteral("/usr/share/datasets/fashion-mnist")),
                 "the pack holds no Fashion-MNIST although it is installed here");

        const int deadline = 60;
        const QString out = tmp_.filePath(QStringLiteral("gpu-check-out"));
        QProcessEnvironment env = clean_env(tmp_.filePath(QStringLiteral("unpack3")));
        env.insert(QStringLiteral("DEADLINE"), QString::number(deadline));
        const QString rel = QDir(hrtest::qsource_path()).relativeFilePath(hrtest::qbinary_path());
        env.insert(QStringLiteral("HEADROOM_BUILD_DIR"), tree + QStringLiteral("/") + rel);
        QElapsedTimer clock;
        clock.start();
        const Result r = run(QStringLiteral("bash"), {tree + QStringLiteral("/.devpack/run.sh"), QStringLiteral("scripts/gpu-check"), out},
                             env, 300000);
        const double seconds = clock.elapsed() / 1000.0;
        qInfo("%s", qPrintable(r.out.right(3000).trimmed()));
        qInfo("the rehearsal: %.1f s with DEADLINE %d", seconds, deadline);
        QVERIFY2(r.code == 0 || r.code == 1, qPrintable(r.out.right(2000)));  // 1: the GPU checks did not pass here
        QVERIFY2(seconds < deadline + 45, qPrintable(QString::number(seconds)));  // the unpacking and a margin

        const QStringList files = QDir(out).entryList(QDir::Files | QDir::Dirs | QDir::NoDotAndDotDot);
        QVERIFY2(files.size() <= 8, qPrintable(files.join(' ')));
        for (const char* f : {"results.jsonl", "summary.txt", "log.txt"})
            QVERIFY2(files.contains(QString::fromLatin1(f)), f);

        // every planned check (scripts/gpu-check's CHECKS) has its line; a check that did not pass says why
        QFile script(tree + QStringLiteral("/scripts/gpu-check"));
        QVERIFY(script.open(QIODevice::ReadOnly));
        const QString text = QString::fromUtf8(script.readAll());
        const QRegularExpressionMatch m = QRegularExpression(QStringLiteral("\\nCHECKS=\\(\\n([^)]*)\\)")).match(text);
        QVERIFY(m.hasMatch());
        QStringList planned;
        for (const QString& line : m.captured(1).split('\n', Qt::SkipEmptyParts)) {
            const QString name = line.trimmed().remove('"').section(' ', 0, 0);
            if (!name.isEmpty() && !name.startsWith('#')) planned << name;
        }
        QVERIFY2(planned.size() >= 8, qPrintable(planned.join(' ')));
        QFile results(out + QStringLiteral("/results.jsonl"));
        QVERIFY(results.open(QIODevice::ReadOnly));
        QStringList checked;
        int lines = 0;
        for (const QByteArray& line : results.readAll().split('\n')) {
            if (line.trimmed().isEmpty()) continue;
            ++lines;
            QJsonParseError err{};
            const QJsonObject o = QJsonDocument::fromJson(line, &err).object();
            QVERIFY2(err.error == QJsonParseError::NoError, line.constData());
            QVERIFY2(o.contains(QStringLiteral("check")) && o.contains(QStringLiteral("status")), line.constData());
            if (o.value(QStringLiteral("kind")).toString() != QLatin1String("check")) continue;
            checked << o.value(QStringLiteral("check")).toString();
            if (o.value(QStringLiteral("status")).toString() != QLatin1String("pass"))
                QVERIFY2(!o.value(QStringLiteral("reason")).toString().isEmpty(), line.constData());
        }
        QCOMPARE(checked, planned);
        // the devices check ran here and said why there is no GPU
        QVERIFY2(lines > planned.size(), "no figures beside the checks' own lines");
        QFile summary(out + QStringLiteral("/summary.txt"));
        QVERIFY(summary.open(QIODevice::ReadOnly));
        QVERIFY(summary.readAll().contains("--- gpu-check: exit"));
    }
};

QTEST_GUILESS_MAIN(GpuPackTest)
#include "test_gpu_pack.moc"
