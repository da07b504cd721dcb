// The CUDA op tests' figures (tests/support/op_diff.h): a comparison's description gives its op and dtype
// the way scripts/gpu-check groups them, the largest difference per op and dtype is kept over the
// comparisons, and each pair is printed as one JSON line after "op-diff: ", which the GPU call collects.
#include <QtTest>

#include <QJsonDocument>
#include <QJsonObject>

#include "op_diff.h"

namespace {

QStringList g_messages;
void keep_message(QtMsgType, const QMessageLogContext&, const QString& msg) { g_messages << msg; }

}  // namespace

class OpDiffTest : public QObject {
    Q_OBJECT

private slots:
    void opAndDtypeFromTheDescription_data() {
        QTest::addColumn<QString>("what");
        QTest::addColumn<QString>("op");
        QTest::addColumn<QString>("dtype");
        QTest::newRow("shapes") << "conv forward f32 x (8, 3, 16, 16) w (4, 3, 3, 3)" << "conv forward" << "f32";
        QTest::newRow("a cast") << "copy f32 -> bf16" << "copy" << "f32->bf16";
        QTest::newRow("a suffix") << "attention bf16 B2 T64 C32 H2 causal 1 dropout 0 dqkv" << "attention dqkv" << "bf16";
        QTest::newRow("words in parentheses") << "maxpool backward (windows) f16" << "maxpool backward (windows)" << "f16";
        QTest::newRow("settings") << "sgd param grad f32 momentum 0.9 nesterov 1" << "sgd param grad" << "f32";
        QTest::newRow("no dtype") << "overlapping copy" << "overlapping copy" << "-";
    }
    void opAndDtypeFromTheDescription() {
        QFETCH(QString, what);
        QFETCH(QString, op);
        QFETCH(QString, dtype);
        const auto key = hrtest::op_key(what);
        QCOMPARE(key.first, op);
        QCOMPARE(key.second, dtype);
    }

    void keepsTheLargestAndPrintsJson() {
        hrtest::op_diffs().clear();
        hrtest::record_op_diff("conv forward bf16 x (1, 2)", 0.01, 2.0, 1e-2, false);
        hrtest::record_op_diff("conv forward bf16 x (4, 2)", 0.03, 3.0, 1e-2, false);  // the largest relative
        hrtest::record_op_diff("conv forward f32 x (1, 2)", 1e-7, 1.0, 1e-5, false);
        g_messages.clear();
        QtMessageHandler old = qInstallMessageHandler(keep_message);
        hrtest::print_op_diffs();
        qInstallMessageHandler(old);
        QCOMPARE(g_messages.size(), 2);
        QVERIFY(hrtest::op_diffs().empty());  // printed once
        QJsonObject bf16;
        for (const QString& m : g_messages) {
            QVERIFY2(m.startsWith(QLatin1String("op-diff: ")), qPrintable(m));
            QJsonParseError err{};
            const QJsonObject o = QJsonDocument::fromJson(m.mid(9).toUtf8(), &err).object();
            QVERIFY2(err.error == QJsonParseError::NoError, qPrintable(m));
            if (o.value("dtype").toString() == QLatin1String("bf16")) bf16 = o;
        }
        QCOMPARE(bf16.value("op").toString(), QString("conv forward"));
        QCOMPARE(bf16.value("checks").toInt(), 2);
        QCOMPARE(bf16.value("max_abs").toDouble(), 0.03);
        QCOMPARE(bf16.value("max_rel").toDouble(), 0.01);
        QCOMPARE(bf16.value("nan").toBool(), false);
    }
};

QTEST_APPLESS_MAIN(OpDiffTest)
#include "test_op_diff.moc"
