// The ledger against the operating system's view of memory for every built-in preset that trains on the
// CPU here (issue 46 item 7; docs/design.md decision 9): between two batch sizes, the growth of the ledger's
// peak equals the growth of the process's peak resident memory (/proc VmHWM, run.json's
// measured_resident_peak_bytes) within 3 %. Each batch size runs in a headroom process of its own, so that
// neither sees the other's peak; the batch sizes are large enough that training, not loading the data set,
// makes the process's peak. (llama-tiny and the ~100M LLaMA: test_llama_memory.)
//
// Two known gaps, stated rather than hidden (QEXPECT_FAIL, so the test fails the day they close):
// - oneDNN's backward-filter primitives keep memory of their own that grows with their chunk's samples
//   (resnet-mini +4.3 % between batch 256 and 1024; with HEADROOM_CPU_CONV=tap, Headroom's own convolution,
//   +0.003 %, the row "resnet-mini, own convolution");
// - mlp between 4096 and 16384 grows about 1 KB a sample more than its ledger outside the heap (heaptrack
//   sees the heap equal to the ledger plus the data set): not found yet.
#include <QtTest>

#include <nlohmann/json.hpp>

#include <fstream>

namespace {

const QString kHeadroomBin = QStringLiteral(HR_BINARY_DIR "/headroom");

struct Peaks {
    double ledger = -1, resident = -1;
};

Peaks run_at(const QString& dir, const QString& preset, int batch, const QStringList& extra,
             const QProcessEnvironment& env) {
    const QString out = dir + QStringLiteral("/%1-b%2").arg(preset).arg(batch);
    QProcess p;
    p.setProcessEnvironment(env);
    p.setProcessChannelMode(QProcess::MergedChannels);
    QStringList args{"train", "--preset", preset, "--batch", QString::number(batch), "--steps", "2", "--threads", "2",
                     "--device", "cpu", "--no-history", "--quiet", "--out", out};
    args += extra;
    p.start(kHeadroomBin, args);
    if (!p.waitForFinished(600000) || p.exitCode() != 0) {
        qWarning("%s", p.readAll().constData());
        return {};
    }
    std::ifstream in((out + "/run.json").toStdString());
    const nlohmann::json j = nlohmann::json::parse(in);
    return {j["distributed"]["measured_peak_bytes"][0].get<double>(),
            j["distributed"]["measured_resident_peak_bytes"][0].get<double>()};
}

}  // namespace

class ResidentGrowthTest : public QObject {
    Q_OBJECT

private slots:
    void ledgerGrowsAsResidentMemory_data() {
        QTest::addColumn<QString>("preset");
        QTest::addColumn<int>("b1");
        QTest::addColumn<int>("b2");
        QTest::addColumn<QStringList>("extra");
        QTest::addColumn<bool>("ownConvolution");
        QTest::addColumn<QString>("knownGap");
        const QStringList none;
        const QStringList synthetic{"--data", "synthetic"};
        QTest::newRow("seed-cnn") << "seed-cnn" << 1024 << 4096 << none << false << QString();
        QTest::newRow("lenet5") << "lenet5" << 256 << 1024 << none << false << QString();
        QTest::newRow("vit-tiny") << "vit-tiny" << 256 << 1024 << none << false << QString();
        QTest::newRow("resnet20") << "resnet20" << 64 << 256 << synthetic << false << QString();
        QTest::newRow("gpt-tiny") << "gpt-tiny" << 8 << 64 << QStringList{"--eval-tokens", "256"} << false << QString();
        QTest::newRow("gpt-char") << "gpt-char" << 4 << 16 << QStringList{"--eval-tokens", "256"} << false << QString();
        QTest::newRow("resnet-mini, own convolution") << "resnet-mini" << 256 << 1024 << none << true << QString();
        QTest::newRow("resnet-mini") << "resnet-mini" << 256 << 1024 << none << false
                                     << QStringLiteral("oneDNN's backward-filter primitives hold memory of their own");
        QTest::newRow("mlp") << "mlp" << 4096 << 16384 << none << false
                             << QStringLiteral("about 1 KB a sample outside the heap, not found yet");
    }

    void ledgerGrowsAsResidentMemory() {
        QFETCH(QString, preset);
        QFETCH(int, b1);
        QFETCH(int, b2);
        QFETCH(QStringList, extra);
        QFETCH(bool, ownConvolution);
        QFETCH(QString, knownGap);
        if (!QFileInfo::exists(kHeadroomBin)) QSKIP("the headroom binary is not built");
        QProcessEnvironment env = QProcessEnvironment::systemEnvironment();
        if (ownConvolution) env.insert(QStringLiteral("HEADROOM_CPU_CONV"), QStringLiteral("tap"));
        QTemporaryDir dir;
        const Peaks a = run_at(dir.path(), preset, b1, extra, env);
        const Peaks b = run_at(dir.path(), preset, b2, extra, env);
        QVERIFY(a.ledger > 0 && b.ledger > 0 && a.resident > 0 && b.resident > 0);
        const double ledger = b.ledger - a.ledger, resident = b.resident - a.resident;
        qInfo("%s, batch %d -> %d: ledger grows %.0f bytes, resident memory %.0f (%+.2f %%)", qPrintable(preset), b1, b2,
              ledger, resident, 100.0 * (resident - ledger) / ledger);
        QVERIFY(ledger > 0);
        const QByteArray gap = knownGap.toUtf8();
        if (!gap.isEmpty()) QEXPECT_FAIL("", gap.constData(), Continue);
        QVERIFY2(std::abs(resident - ledger) <= 0.03 * ledger, qPrintable(QString::number(resident / ledger)));
    }
};

QTEST_GUILESS_MAIN(ResidentGrowthTest)
#include "test_resident_growth.moc"
