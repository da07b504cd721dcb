// scripts/count-code, the house's committed measures (docs/house.md): the functions of core/ and app/ by
// length (Universal Ctags, .cu/.cuh included) and the branches on layout kinds. Checked on a fixture whose
// functions and branches are known by construction (a C++ file and a CUDA file: a __global__ kernel must be
// found), and on the tree itself against a reading of the source independent of ctags: where rank_layout()
// starts and where its closing brace is. Fails when ctags is missing or the script is broken.
#include <QtTest>
#include "test_support.h"

#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QProcess>
#include <QTemporaryDir>

namespace {

const QString kScript = hrtest::qsource_path("scripts/count-code");

QJsonObject countCode(const QStringList& args, const QString& dir) {
    QProcess p;
    p.setWorkingDirectory(dir);
    p.start(kScript, QStringList{"--json"} + args);
    if (!p.waitForFinished(120000) || p.exitStatus() != QProcess::NormalExit || p.exitCode() != 0) {
        qWarning("count-code failed (%d): %s", p.exitCode(), p.readAllStandardError().constData());
        return {};
    }
    return QJsonDocument::fromJson(p.readAllStandardOutput()).object();
}

QJsonObject functionNamed(const QJsonObject& counted, const QString& name) {
    for (const QJsonValue& f : counted["functions"].toArray())
        if (f.toObject()["name"].toString() == name) return f.toObject();
    return {};
}

void writeFile(const QString& path, const QByteArray& text) {
    QFile f(path);
    QVERIFY(f.open(QIODevice::WriteOnly));
    f.write(text);
}

}  // namespace

class CountCodeTest : public QObject {
    Q_OBJECT
private slots:
    void fixtureCountedExactly() {
        QTemporaryDir dir;
        QVERIFY(dir.isValid());
        writeFile(dir.filePath("a.cpp"),
                  "// layout.pipeline > 1 in a comment does not count\n"  // 1
                  "namespace hr {\n"                                      // 2
                  "int short_one(int a) {\n"                              // 3
                  "    return a + 1;\n"                                   // 4
                  "}\n"                                                   // 5
                  "int longer_one(const L& l, const S& s, int x) {\n"     // 6
                  "    if (l.pipeline > 1) x += 1;\n"                     // 7: 1
                  "    if (l.tp_head == 1 && s.shard != \"none\") x++;\n" // 8: 2
                  "    switch (s.stage) {\n"                              // 9
                  "    case ShardStage::zero3: x += 3; break;\n"          // 10: 1
                  "    default: break;\n"                                 // 11
                  "    }\n"                                               // 12
                  "    const char* t = \"tp_head > 1\"; /* pipeline > 1 */\n"  // 13: a string, a comment
                  "    if (s.sharded()) x += 4;\n"                        // 14: 1
                  "    if (world_size > 1) x += 5;\n"                     // 15: not a layout kind
                  "    auto f = [&](int y) {\n"                           // 16: a lambda, not listed
                  "        return y + x;\n"                               // 17
                  "    };\n"                                              // 18
                  "    if (st.pipelined()) x += 6;\n"                     // 19: 1
                  "    return f(x);\n"                                    // 20
                  "}\n"                                                   // 21
                  "}\n"                                                   // 22
                  "struct T {\n"                                         // 23
                  "    bool pipelined() const { return k_ > 1; }\n"       // 24: a definition, not a branch
                  "    int k_ = 1;\n"
                  "};\n");
        writeFile(dir.filePath("k.cu"),
                  "template <class T>\n"                                  // 1
                  "__global__ void scale_kernel(T* x, int n) {\n"         // 2
                  "    const int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
                  "    if (i < n) x[i] *= 2;\n"
                  "}\n");                                                 // 5
        const QJsonObject c = countCode({"."}, dir.path());
        QVERIFY2(!c.isEmpty(), "count-code gave no JSON");
        QCOMPARE(c["function_count"].toInt(), 4);
        const QJsonArray fns = c["functions"].toArray();
        QCOMPARE(fns.size(), 4);
        // longest first
        QCOMPARE(fns[0].toObject()["name"].toString(), QString("hr::longer_one"));
        QCOMPARE(fns[0].toObject()["line"].toInt(), 6);
        QCOMPARE(fns[0].toObject()["length"].toInt(), 16);
        QCOMPARE(fns[1].toObject()["name"].toString(), QString("scale_kernel"));
        QCOMPARE(fns[1].toObject()["file"].toString(), QString("./k.cu"));
        QCOMPARE(fns[1].toObject()["length"].toInt(), 4);
        QCOMPARE(fns[2].toObject()["name"].toString(), QString("hr::short_one"));
        QCOMPARE(fns[2].toObject()["length"].toInt(), 3);
        QCOMPARE(fns[3].toObject()["name"].toString(), QString("T::pipelined"));
        QCOMPARE(fns[3].toObject()["line"].toInt(), 24);
        QCOMPARE(fns[3].toObject()["length"].toInt(), 1);
        QCOMPARE(c["branches"].toObject()["./a.cpp"].toInt(), 6);
        QVERIFY(!c["branches"].toObject().contains("./k.cu"));
        QCOMPARE(c["branch_total"].toInt(), 6);
    }

    void treeCounted() {
        const QJsonObject c = countCode({}, hrtest::qsource_path());
        QVERIFY2(!c.isEmpty(), "count-code gave no JSON");
        // a known function, where a plain reading of the file puts it: its signature line to the first
        // line after it that is a lone closing brace
        QFile src(hrtest::qsource_path("core/strategy/rank_layout.cpp"));
        QVERIFY(src.open(QIODevice::ReadOnly | QIODevice::Text));
        const QStringList lines = QString::fromUtf8(src.readAll()).split('\n');
        const int start = int(lines.indexOf("RankLayout rank_layout(const StrategyConfig& s, int world_size) {")) + 1;
        QVERIFY(start > 0);
        int end = start;
        while (end < lines.size() && lines[end - 1] != "}") ++end;
        const QJsonObject f = functionNamed(c, "hr::rank_layout");
        QVERIFY2(!f.isEmpty(), "hr::rank_layout not found");
        QCOMPARE(f["file"].toString(), QString("core/strategy/rank_layout.cpp"));
        QCOMPARE(f["line"].toInt(), start);
        QCOMPARE(f["end"].toInt(), end);
        QCOMPARE(f["length"].toInt(), end - start + 1);
        QVERIFY2(f["length"].toInt() >= 15 && f["length"].toInt() <= 120, qPrintable(QString::number(f["length"].toInt())));
        // CUDA files are counted: a kernel of the CUDA backend
        bool cudaKernel = false;
        for (const QJsonValue& v : c["functions"].toArray())
            cudaKernel = cudaKernel || (v.toObject()["file"].toString().endsWith(".cu") &&
                                        v.toObject()["name"].toString().endsWith("_kernel"));
        QVERIFY2(cudaKernel, "no __global__ kernel of a .cu file was counted");
        // sane totals: thousands of functions, sorted longest first; layout branches in the layout's own
        // file, and a total of tens to hundreds
        const QJsonArray fns = c["functions"].toArray();
        QVERIFY2(fns.size() > 1000, qPrintable(QString::number(fns.size())));
        for (int i = 1; i < fns.size(); ++i)
            QVERIFY(fns[i - 1].toObject()["length"].toInt() >= fns[i].toObject()["length"].toInt());
        QVERIFY(c["branches"].toObject()["core/strategy/rank_layout.cpp"].toInt() >= 5);
        const int total = c["branch_total"].toInt();
        QVERIFY2(total >= 20 && total <= 2000, qPrintable(QString::number(total)));
        qInfo("%d functions, the longest %s (%d lines); %d branches on layout kinds", int(fns.size()),
              qPrintable(fns[0].toObject()["name"].toString()), fns[0].toObject()["length"].toInt(), total);
    }
};

QTEST_GUILESS_MAIN(CountCodeTest)
#include "test_count_code.moc"
