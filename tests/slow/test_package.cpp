// The Debian packages (cmake/Package.cmake): cpack builds them from this build tree, their dependencies
// are Debian packages that cover every library the binary needs (checked against the dynamic linker
// and dpkg's own database, not against what CPack wrote), and unpacked into a scratch prefix with
// `dpkg -x` the program runs from there: --version and a three-step headless training run. The
// desktop entry, AppStream metainfo (appstreamcli), icons, translations and man page are in place.
#include <QtTest>
#include "test_support.h"

#include <QJsonDocument>
#include <QJsonObject>
#include <QProcess>
#include <QRegularExpression>
#include <QSet>
#include <QStandardPaths>
#include <QTemporaryDir>

namespace {

struct Result {
    int code = -1;
    QString out, err;
};

Result run(const QString& program, const QStringList& args, const QProcessEnvironment& env = QProcessEnvironment::systemEnvironment(),
           int timeoutMs = 180000) {
    QProcess p;
    p.setProcessEnvironment(env);
    p.start(program, args);
    Result r;
    if (!p.waitForFinished(timeoutMs)) {
        p.kill();
        p.waitForFinished();
        r.err = QStringLiteral("timed out: %1 %2").arg(program, args.join(' '));
        return r;
    }
    r.code = p.exitStatus() == QProcess::NormalExit ? p.exitCode() : -1;
    r.out = QString::fromUtf8(p.readAllStandardOutput());
    r.err = QString::fromUtf8(p.readAllStandardError());
    return r;
}

// "a (>= 1), b | c, d" -> {{a}, {b, c}, {d}}
QList<QStringList> dependsGroups(const QString& field) {
    QList<QStringList> out;
    for (const QString& group : field.split(',', Qt::SkipEmptyParts)) {
        QStringList names;
        for (QString alt : group.split('|', Qt::SkipEmptyParts)) {
            alt = alt.trimmed();
            names << alt.left(alt.indexOf(' ') < 0 ? alt.size() : alt.indexOf(' ')).trimmed();
        }
        out << names;
    }
    return out;
}

// The Debian package that owns a file, by dpkg's database ("" when none: not from a package).
QString owner(const QString& path) {
    QStringList candidates{path, QFileInfo(path).canonicalFilePath()};
    for (const QString& p : QStringList(candidates))  // merged /usr: a package may list either spelling
        candidates << (p.startsWith("/usr/") ? p.mid(4) : "/usr" + p);
    for (const QString& c : candidates) {
        const Result r = run("dpkg-query", {"-S", c}, QProcessEnvironment::systemEnvironment(), 60000);
        if (r.code == 0) return r.out.section(':', 0, 0).trimmed();
    }
    return {};
}

}  // namespace

class TestPackage : public QObject {
    Q_OBJECT
    QTemporaryDir m_tmp;
    QString m_root;             // the scratch prefix the packages are unpacked into
    QStringList m_debs;
    bool m_expectCuda = false;  // the build has the CUDA backend module (target headroom_cuda)

private slots:
    void initTestCase() {
        for (const char* tool : {"cpack", "dpkg-deb", "dpkg-shlibdeps", "dpkg-query", "ldd", "readelf"})
            if (QStandardPaths::findExecutable(QLatin1String(tool)).isEmpty())
                QSKIP(qPrintable(QStringLiteral("%1 is not installed (scripts/setup installs it)").arg(tool)));
        QVERIFY(m_tmp.isValid());
        const QString config = hrtest::qbinary_path("CPackConfig.cmake");
        QVERIFY2(QFile::exists(config), "no CPackConfig.cmake: the build does not include cmake/Package.cmake");
        {
            QFile f(config);
            QVERIFY(f.open(QIODevice::ReadOnly));
            const QString text = QString::fromUtf8(f.readAll());
            const auto m = QRegularExpression("set\\(CPACK_COMPONENTS_ALL \"([^\"]*)\"\\)").match(text);
            QVERIFY(m.hasMatch());
            m_expectCuda = m.captured(1).split(';').contains("cuda");
        }
        QElapsedTimer timer;
        timer.start();
        const Result pack = run("cpack", {"-G", "DEB", "--config", config, "-B", m_tmp.filePath("pkg"), "-D",
                                          "CPACK_DEBIAN_COMPRESSION_TYPE=gzip"});
        QVERIFY2(pack.code == 0, qPrintable(pack.out + pack.err));
        qInfo("cpack: %.1f s", timer.elapsed() / 1000.0);
        for (const QString& f : QDir(m_tmp.filePath("pkg")).entryList({"*.deb"}, QDir::Files))
            m_debs << m_tmp.filePath("pkg/" + f);
        m_root = m_tmp.filePath("root");
        for (const QString& deb : m_debs) {
            const Result x = run("dpkg-deb", {"-x", deb, m_root});
            QVERIFY2(x.code == 0, qPrintable(x.err));
        }
    }

    void packagesAreThere() {
        QStringList names;
        for (const QString& deb : m_debs) names << run("dpkg-deb", {"-f", deb, "Package"}).out.trimmed();
        names.sort();
        QStringList expect{"headroom"};
        if (m_expectCuda) expect << "headroom-cuda";
        expect.sort();
        QCOMPARE(names, expect);
        for (const QString& deb : m_debs)
            QCOMPARE(run("dpkg-deb", {"-f", deb, "Version"}).out.trimmed(), QStringLiteral(HEADROOM_VERSION));
    }

    void dependenciesAreDebianPackagesCoveringTheBinary() {
        QString mainDeb;
        for (const QString& deb : m_debs)
            if (run("dpkg-deb", {"-f", deb, "Package"}).out.trimmed() == "headroom") mainDeb = deb;
        QVERIFY(!mainDeb.isEmpty());
        const QString depends = run("dpkg-deb", {"-f", mainDeb, "Depends"}).out.trimmed();
        const QList<QStringList> groups = dependsGroups(depends);
        QVERIFY2(groups.size() >= 8, qPrintable(depends));
        QSet<QString> named;
        for (const QStringList& alts : groups) {
            bool known = false;
            for (const QString& name : alts) {
                named.insert(name);
                QVERIFY2(!name.contains("cuda") && !name.contains("nvidia"), qPrintable(name));
                known = known || run("dpkg-query", {"-W", "-f", "${Status}", name}).out.contains("installed");
            }
            QVERIFY2(known, qPrintable("not a Debian package installed here: " + alts.join(" | ")));
        }
        // what the program loads at run time (dlopen, Qt plugin) is named too
        QVERIFY(named.contains("libopenblas0") || named.contains("libopenblas0-pthread"));
        QVERIFY(named.contains("libqt6sql6-sqlite"));
        // every library the binary needs directly (its NEEDED entries, resolved by the dynamic linker)
        // comes from a package in Depends; the only others allowed are CUDA's, which are not Debian's
        const QString binary = m_root + "/usr/bin/headroom";
        const Result elf = run("readelf", {"-d", binary});
        QVERIFY(elf.code == 0);
        QStringList needed;
        for (auto it = QRegularExpression("\\(NEEDED\\)\\s+Shared library: \\[([^\\]]+)\\]").globalMatch(elf.out); it.hasNext();)
            needed << it.next().captured(1);
        QVERIFY2(needed.size() >= 8, qPrintable(elf.out));
        const Result ldd = run("ldd", {binary});
        QMap<QString, QString> resolved;  // soname -> path
        for (auto it = QRegularExpression("^\\s*(\\S+) => (\\S+)", QRegularExpression::MultilineOption).globalMatch(ldd.out);
             it.hasNext();) {
            const auto m = it.next();
            resolved[m.captured(1)] = m.captured(2);
        }
        // the dynamic linker itself: "/lib64/ld-linux-x86-64.so.2 (0x...)"
        for (auto it = QRegularExpression("^\\s*(/\\S+) \\(", QRegularExpression::MultilineOption).globalMatch(ldd.out); it.hasNext();) {
            const QString path = it.next().captured(1);
            resolved.insert(QFileInfo(path).fileName(), path);
        }
        QStringList uncovered;
        for (const QString& so : needed) {
            const QString path = resolved.value(so);
            QVERIFY2(!path.isEmpty(), qPrintable(so + " does not resolve:\n" + ldd.out));
            const QString pkg = owner(path);
            if (pkg.isEmpty()) {
                if (!path.contains("/cuda")) uncovered << so + " (" + path + ", no package)";
                continue;
            }
            if (!named.contains(pkg) && !named.contains(pkg.section(':', 0, 0))) uncovered << so + " from " + pkg;
        }
        QVERIFY2(uncovered.isEmpty(), qPrintable(uncovered.join('\n') + "\nDepends: " + depends));
        if (m_expectCuda) {
            for (const QString& deb : m_debs)
                if (run("dpkg-deb", {"-f", deb, "Package"}).out.trimmed() == "headroom-cuda")
                    QVERIFY(run("dpkg-deb", {"-f", deb, "Depends"}).out.contains("headroom (= " HEADROOM_VERSION ")"));
        }
    }

    void desktopFilesAreInPlace() {
        const QString id = "io.headroom.Headroom";
        for (const QString& rel : QStringList{"/usr/share/headroom/translations/headroom_zh_CN.qm",
                                   "/usr/share/icons/hicolor/scalable/apps/" + id + ".svg",
                                   "/usr/share/icons/hicolor/48x48/apps/" + id + ".png",
                                   "/usr/share/icons/hicolor/256x256/apps/" + id + ".png",
                                   "/usr/share/applications/" + id + ".desktop",
                                   "/usr/share/metainfo/" + id + ".metainfo.xml", QString("/usr/share/man/man1/headroom.1.gz")})
            QVERIFY2(QFileInfo(m_root + rel).size() > 0, qPrintable(rel));
        {
            QFile png(m_root + "/usr/share/icons/hicolor/48x48/apps/" + id + ".png");
            QVERIFY(png.open(QIODevice::ReadOnly));
            const QByteArray head = png.read(24);  // signature, IHDR: width and height, big-endian
            QVERIFY(head.startsWith("\x89PNG\r\n\x1a\n"));
            auto be32 = [&](int at) {
                return (quint32(quint8(head[at])) << 24) | (quint32(quint8(head[at + 1])) << 16) |
                       (quint32(quint8(head[at + 2])) << 8) | quint32(quint8(head[at + 3]));
            };
            QCOMPARE(be32(16), 48u);
            QCOMPARE(be32(20), 48u);
        }
        QFile desktop(m_root + "/usr/share/applications/" + id + ".desktop");
        QVERIFY(desktop.open(QIODevice::ReadOnly));
        const QString entry = QString::fromUtf8(desktop.readAll());
        QVERIFY(entry.contains("\nExec=headroom\n"));
        QVERIFY(entry.contains("\nIcon=" + id + "\n"));
        if (!QStandardPaths::findExecutable("desktop-file-validate").isEmpty()) {
            const Result v = run("desktop-file-validate", {desktop.fileName()});
            QVERIFY2(v.code == 0 && v.out.trimmed().isEmpty(), qPrintable(v.out + v.err));
        }
        if (QStandardPaths::findExecutable("appstreamcli").isEmpty()) {
            qWarning("appstreamcli is not installed: the metainfo is not validated");
        } else {
            const Result v = run("appstreamcli", {"validate", "--no-net", "--strict", m_root + "/usr/share/metainfo/" + id + ".metainfo.xml"});
            QVERIFY2(v.code == 0, qPrintable(v.out + v.err));
        }
        // the man page is the program's --help
        const Result man = run("gzip", {"-dc", m_root + "/usr/share/man/man1/headroom.1.gz"});
        QVERIFY(man.code == 0);
        QVERIFY(man.out.startsWith(".TH HEADROOM 1"));
        QVERIFY(man.out.contains(".SH NAME"));
        QVERIFY(man.out.contains("headroom train [options]"));
        QVERIFY(man.out.contains("--budget"));
    }

    void runsFromTheScratchPrefix() {
        const QString binary = m_root + "/usr/bin/headroom";
        QVERIFY(QFileInfo(binary).isExecutable());
        QProcessEnvironment env = QProcessEnvironment::systemEnvironment();
        env.insert("HOME", m_tmp.filePath("home"));  // nothing of the user's is read or written
        env.insert("XDG_DATA_HOME", m_tmp.filePath("home/data"));
        env.insert("XDG_CONFIG_HOME", m_tmp.filePath("home/config"));
        env.insert("LANG", "C.UTF-8");
        env.remove("LANGUAGE");
        const Result version = run(binary, {"--version"}, env);
        QCOMPARE(version.code, 0);
        QCOMPARE(version.out.trimmed(), QStringLiteral("headroom " HEADROOM_VERSION));
        // the command line without widgets is installed beside it, the same version
        const QString cli = m_root + "/usr/bin/headroom-cli";
        QVERIFY(QFileInfo(cli).isExecutable());
        const Result cliVersion = run(cli, {"--version"}, env);
        QCOMPARE(cliVersion.code, 0);
        QCOMPARE(cliVersion.out.trimmed(), QStringLiteral("headroom " HEADROOM_VERSION));
        const QString out = m_tmp.filePath("run");
        const Result train = run(binary, {"train", "--preset", "mlp", "--data", "synthetic", "--steps", "3", "--out", out,
                                          "--no-history", "--threads", "2"},
                                 env);
        QVERIFY2(train.code == 0, qPrintable(train.out + train.err));
        QVERIFY(train.out.contains(QRegularExpression("test_accuracy=0\\.\\d{4}")));
        QFile f(out + "/run.json");
        QVERIFY(f.open(QIODevice::ReadOnly));
        const QJsonObject record = QJsonDocument::fromJson(f.readAll()).object();
        QCOMPARE(record["status"].toString(), QStringLiteral("finished"));
        QCOMPARE(record["final"].toObject()["steps"].toInt(), 3);
        QVERIFY(QFileInfo(out + "/model.safetensors").size() > 0);
        QVERIFY(!QFileInfo::exists(m_tmp.filePath("home/data/Headroom")));  // --no-history: no database
    }
};

QTEST_GUILESS_MAIN(TestPackage)
#include "test_package.moc"
