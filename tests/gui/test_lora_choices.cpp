// LoRA choices in the window (issue 57 item 3): beside the rank and the quantised base, alpha, dropout and
// a box per projection kind of a LLaMA-family block (peft's names). The memory plan follows each choice:
// its parameter, gradient and optimizer-state bytes (dropout: workspace) change as a box is toggled and equal what
// `headroom plan --json` prints for the same --lora-targets/--lora-alpha/--lora-dropout (the command's own
// output, parsed from its JSON, not the window's code path). A GPT model has no boxes (it adapts every
// projection). The setup panel is rendered at 1366 x 768 in English and Chinese (HEADROOM_SHOT_DIR).
#include <QApplication>
#include <QCheckBox>
#include <QDir>
#include <QDockWidget>
#include <QDoubleSpinBox>
#include <QFile>
#include <QJsonDocument>
#include <QJsonObject>
#include <QLabel>
#include <QScrollArea>
#include <QScrollBar>
#include <QSpinBox>
#include <QStandardPaths>
#include <QTemporaryDir>
#include <QTest>

#include "cli/commands.h"
#include "cli/flags.h"
#include "cli/output.h"
#include "gui/AppSettings.h"
#include "gui/MainWindow.h"
#include "gui/MemoryPlanPanel.h"
#include "gui/TrainingSetupPanel.h"
#include "gui/DataPanel.h"
#include "memory/ledger.h"
#include "nn/transformer_spec.h"
#include "laptop_screen.h"

using namespace hrapp;

namespace {

// `headroom plan --preset llama-tiny ... --json`: the device bytes per category, as the command prints them
QJsonObject lc_cliPlan(const hr::TrainConfig& c, const QStringList& lora, QString* text) {
    const Subcommand* sub = findSubcommand(QLatin1String("plan"));
    if (!sub) qFatal("no plan subcommand");
    QStringList args = {QStringLiteral("--preset"), QStringLiteral("llama-tiny"),
                        QStringLiteral("--batch"), QString::number(c.batch),
                        QStringLiteral("--optimizer"), QString::fromStdString(c.optimizer.kind),
                        QStringLiteral("--device"), QStringLiteral("cpu"), QStringLiteral("--json")};
    args += lora;
    OutputCapture out;
    const int rc = runPlanCommand(parseCommandLine(*sub, args));
    *text = out.out() + out.err();
    if (rc != 0) return {};
    return QJsonDocument::fromJson(out.out().toUtf8()).object().value(QStringLiteral("device")).toObject();
}

qint64 lc_bytes(const hr::MemoryPlan& p, hr::MemCategory c) { return qint64(p.device[static_cast<int>(c)]); }

}  // namespace

class TestLoraChoices : public QObject {
    Q_OBJECT
    QTemporaryDir m_dir;

    static void prepareLlama(MainWindow& w) {
        w.setPersistState(false);
        w.setAskBeforeClose(false);
        w.show();
        w.setGeometry(QGuiApplication::primaryScreen()->availableGeometry());
        w.loadPreset(QStringLiteral("llama-tiny"));
        hr::TrainConfig c = w.trainConfig();
        c.device = "cpu";
        w.setTrainConfig(c);
        w.memoryPlan()->updateNow();
    }

    static void shoot(MainWindow& w, const QString& name) {
        TrainingSetupPanel* setup = w.setupPanel();
        if (auto* dock = w.findChild<QDockWidget*>(QStringLiteral("setupDock"))) dock->raise();
        QTest::qWait(100);
        auto* targets = setup->findChild<QWidget*>(QStringLiteral("loraTargets"));
        QVERIFY(targets && targets->isVisible());
        // the LoRA rows in view: the dock's scroll area brought to them
        if (auto* scroll = qobject_cast<QScrollArea*>(setup->parentWidget() ? setup->parentWidget()->parentWidget() : nullptr)) {
            scroll->ensureWidgetVisible(targets, 8, 120);
            QTest::qWait(50);
            // every box inside the dock's visible width: none cut off on the right
            const QRect r(targets->mapTo(scroll->viewport(), QPoint(0, 0)), targets->size());
            QVERIFY2(r.right() <= scroll->viewport()->width(),
                     qPrintable(QStringLiteral("boxes end at %1 in a %2 wide view").arg(r.right()).arg(scroll->viewport()->width())));
        }
        const QPixmap shot = w.grab();
        QVERIFY2(shot.width() <= 1366 && shot.height() <= 768,
                 qPrintable(QStringLiteral("%1 x %2").arg(shot.width()).arg(shot.height())));
        const QByteArray dir = qgetenv("HEADROOM_SHOT_DIR");
        if (!dir.isEmpty()) {
            QVERIFY(shot.save(QString::fromLocal8Bit(dir) + QLatin1Char('/') + name + QStringLiteral("-window.png")));
            QVERIFY(setup->grab().save(QString::fromLocal8Bit(dir) + QLatin1Char('/') + name + QStringLiteral("-panel.png")));
        }
    }

private slots:
    void initTestCase() {
        QStandardPaths::setTestModeEnabled(true);
        QCoreApplication::setOrganizationName(QStringLiteral("HeadroomTest"));
        QVERIFY(m_dir.isValid());
        qputenv("HEADROOM_DB", m_dir.filePath(QStringLiteral("runs.sqlite")).toUtf8());
        QCOMPARE(installTranslators(QStringLiteral("en")), QStringLiteral("en"));
    }

    void planFollowsEachChoice() {
        MainWindow w;
        prepareLlama(w);
        TrainingSetupPanel* setup = w.setupPanel();
        MemoryPlanPanel* plan = w.memoryPlan();
        auto* rank = setup->findChild<QSpinBox*>(QStringLiteral("loraRankSpin"));
        auto* alpha = setup->findChild<QDoubleSpinBox*>(QStringLiteral("loraAlphaSpin"));
        auto* dropout = setup->findChild<QDoubleSpinBox*>(QStringLiteral("loraDropoutSpin"));
        auto* targets = setup->findChild<QWidget*>(QStringLiteral("loraTargets"));
        QVERIFY(rank && alpha && dropout && targets);
        QVERIFY(targets->isVisibleTo(setup));  // a LLaMA-family model: a box per projection kind
        QVERIFY(!targets->isEnabled() && !alpha->isEnabled());  // LoRA off
        const char* const names[] = {"q_proj", "k_proj", "v_proj", "o_proj", "gate_proj", "up_proj", "down_proj"};
        std::map<std::string, QCheckBox*> box;
        for (const char* n : names) {
            box[n] = setup->findChild<QCheckBox*>(QStringLiteral("loraTarget_") + QLatin1String(n));
            QVERIFY2(box[n], n);
        }
        QVERIFY(box["q_proj"]->isChecked() && box["v_proj"]->isChecked() && !box["k_proj"]->isChecked());  // peft's default
        // the Data panel counts instruction rows against the model's sequence (its input [T], 0 < T)
        QVERIFY(hr::model_sequence_length(w.trainConfig().model) > 0);
        QCOMPARE(w.dataPanel()->sequenceLength(), qint64(hr::model_sequence_length(w.trainConfig().model)));

        rank->setValue(8);
        QVERIFY(targets->isEnabled() && alpha->isEnabled() && dropout->isEnabled());
        auto compare = [&](const QString& list, double a, double p) {
            plan->updateNow();
            QVERIFY2(plan->hasPlan(), qPrintable(plan->errorText()));
            const hr::TrainConfig c = w.trainConfig();
            QCOMPARE(QString::fromStdString(c.strategy.lora_targets), list);
            QCOMPARE(c.strategy.lora_alpha, a);
            QCOMPARE(c.strategy.lora_dropout, p);
            QStringList flags = {QStringLiteral("--lora"), QStringLiteral("8"), QStringLiteral("--lora-targets"), list};
            if (a > 0) flags << QStringLiteral("--lora-alpha") << QString::number(a);
            if (p > 0) flags << QStringLiteral("--lora-dropout") << QString::number(p);
            QString text;
            const QJsonObject cli = lc_cliPlan(c, flags, &text);
            QVERIFY2(!cli.isEmpty(), qPrintable(text));
            for (hr::MemCategory cat : {hr::MemCategory::parameters, hr::MemCategory::gradients,
                                        hr::MemCategory::optimizer_state, hr::MemCategory::activations,
                                        hr::MemCategory::workspace}) {
                const QString name = QString::fromLatin1(hr::category_name(cat));
                QVERIFY2(qint64(cli.value(name).toDouble()) == lc_bytes(plan->plan(), cat),
                         qPrintable(QStringLiteral("%1 (%2): window %3, headroom plan %4")
                                        .arg(name, list)
                                        .arg(lc_bytes(plan->plan(), cat))
                                        .arg(qint64(cli.value(name).toDouble()))));
            }
        };
        compare(QStringLiteral("q_proj,v_proj"), 0, 0);
        const qint64 params0 = lc_bytes(plan->plan(), hr::MemCategory::parameters);
        const qint64 grads0 = lc_bytes(plan->plan(), hr::MemCategory::gradients);
        const qint64 opt0 = lc_bytes(plan->plan(), hr::MemCategory::optimizer_state);
        // one more projection kind: more adapters, so more parameters, gradients and optimizer state
        box["k_proj"]->setChecked(true);
        compare(QStringLiteral("q_proj,k_proj,v_proj"), 0, 0);
        QVERIFY(lc_bytes(plan->plan(), hr::MemCategory::parameters) > params0);
        QVERIFY(lc_bytes(plan->plan(), hr::MemCategory::gradients) > grads0);
        QVERIFY(lc_bytes(plan->plan(), hr::MemCategory::optimizer_state) > opt0);
        // the MLP's three instead of the attention's: yet other bytes
        const qint64 params1 = lc_bytes(plan->plan(), hr::MemCategory::parameters);
        for (const char* n : {"gate_proj", "up_proj", "down_proj"}) box[n]->setChecked(true);
        for (const char* n : {"q_proj", "k_proj"}) box[n]->setChecked(false);
        compare(QStringLiteral("v_proj,gate_proj,up_proj,down_proj"), 0, 0);
        QVERIFY(lc_bytes(plan->plan(), hr::MemCategory::parameters) != params1);
        // the last box cannot be cleared: an adapter needs a projection
        for (const char* n : {"v_proj", "gate_proj", "up_proj"}) box[n]->setChecked(false);
        box["down_proj"]->setChecked(false);
        QVERIFY(box["down_proj"]->isChecked());
        compare(QStringLiteral("down_proj"), 0, 0);
        // alpha scales, it stores nothing; dropout's dropped input and mask are workspace
        const qint64 work0 = lc_bytes(plan->plan(), hr::MemCategory::workspace);
        alpha->setValue(32);
        compare(QStringLiteral("down_proj"), 32, 0);
        QCOMPARE(lc_bytes(plan->plan(), hr::MemCategory::workspace), work0);
        dropout->setValue(0.1);
        compare(QStringLiteral("down_proj"), 32, 0.1);
        QVERIFY(lc_bytes(plan->plan(), hr::MemCategory::workspace) > work0);
        // back from a configuration
        hr::TrainConfig c = w.trainConfig();
        c.strategy.lora_targets = "k_proj,o_proj";
        c.strategy.lora_alpha = 4;
        w.setTrainConfig(c);
        QVERIFY(box["k_proj"]->isChecked() && box["o_proj"]->isChecked() && !box["down_proj"]->isChecked());
        QCOMPARE(alpha->value(), 4.0);
        compare(QStringLiteral("k_proj,o_proj"), 4, 0.1);
        // the plan's strategy line names them
        bool named = false;
        for (QLabel* l : plan->findChildren<QLabel*>())
            named = named || l->text().contains(QStringLiteral("LoRA rank 8 (k_proj,o_proj)"));
        QVERIFY(named);
        // LoRA off: nothing of it in the configuration (core refuses targets and dropout without a rank)
        rank->setValue(0);
        QVERIFY(!targets->isEnabled());
        c = w.trainConfig();
        QVERIFY(c.strategy.lora_targets.empty() && c.strategy.lora_dropout == 0 && c.strategy.lora_alpha == 0);
        rank->setValue(8);
        shoot(w, QStringLiteral("lora-choices-en"));
        // a GPT model adapts every projection: no boxes, no targets in its configuration
        w.loadPreset(QStringLiteral("gpt-tiny"));
        QVERIFY(!targets->isVisibleTo(setup));
        setup->findChild<QSpinBox*>(QStringLiteral("loraRankSpin"))->setValue(4);
        QVERIFY(w.trainConfig().strategy.lora_targets.empty());
    }

    void chineseWindow() {
        QCOMPARE(installTranslators(QStringLiteral("zh_CN")), QStringLiteral("zh_CN"));
        {
            MainWindow w;
            prepareLlama(w);
            w.setupPanel()->findChild<QSpinBox*>(QStringLiteral("loraRankSpin"))->setValue(8);
            auto* alpha = w.setupPanel()->findChild<QDoubleSpinBox*>(QStringLiteral("loraAlphaSpin"));
            QVERIFY(alpha->specialValueText() != QLatin1String("the rank"));  // translated
            shoot(w, QStringLiteral("lora-choices-zh_CN"));
        }
        installTranslators(QStringLiteral("en"));
    }
};

// on Qt's offscreen platform with a 1366 x 768 screen (tests/support/laptop_screen.h)
int main(int argc, char** argv) { return hrtest::run_on_laptop_screen<TestLoraChoices>(argc, argv); }
#include "test_lora_choices.moc"
