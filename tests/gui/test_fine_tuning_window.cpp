// The Memory plan tab's fine-tuning table (issue 46 item 6): for a language model the window shows full
// fine-tuning / LoRA / QLoRA x checkpointing x ZeRO-3 on 1-8 cards for the memory limit, computed off the GUI
// thread, and its cells are the ones `headroom plan --budget` prints for the same configuration (the
// command's own output, parsed from its text, not the window's code path). Not shown for other models. It
// also renders the window at 1366 x 768 in English and Chinese (HEADROOM_SHOT_DIR: where the PNGs go).
#include <QApplication>
#include <QDir>
#include <QFile>
#include <QHeaderView>
#include <QLabel>
#include <QGroupBox>
#include <QRegularExpression>
#include <QScreen>
#include <QScrollArea>
#include <QScrollBar>
#include <QStandardPaths>
#include <QTabWidget>
#include <QTableWidget>
#include <QTemporaryDir>
#include <QTest>

#include "cli/commands.h"
#include "cli/flags.h"
#include "cli/output.h"
#include "gui/AppSettings.h"
#include "gui/MainWindow.h"
#include "gui/MemoryPlanPanel.h"
#include "laptop_screen.h"

using namespace hrapp;

namespace {

// What `headroom plan --preset llama-tiny --budget BYTES ...` prints as the fine-tuning table: its rows, a
// list of cells each (columns are two or more spaces apart; a cell holds at most single spaces).
std::vector<QStringList> ftw_cliRows(const hr::TrainConfig& c, std::size_t budget, QString* text) {
    const Subcommand* sub = findSubcommand(QLatin1String("plan"));
    if (!sub) qFatal("no plan subcommand");
    const QStringList args = {QStringLiteral("--preset"), QStringLiteral("llama-tiny"),
                              QStringLiteral("--batch"), QString::number(c.batch),
                              QStringLiteral("--optimizer"), QString::fromStdString(c.optimizer.kind),
                              QStringLiteral("--device"), QStringLiteral("cpu"),
                              QStringLiteral("--budget"), QString::number(budget)};
    OutputCapture out;
    const int rc = runPlanCommand(parseCommandLine(*sub, args));
    *text = out.out() + out.err();
    std::vector<QStringList> rows;
    if (rc != 0) return rows;
    bool in = false;
    for (const QString& line : out.out().split(QLatin1Char('\n'))) {
        const QStringList cols = line.trimmed().split(QRegularExpression(QStringLiteral(" {2,}")), Qt::SkipEmptyParts);
        if (!in) {
            in = cols.size() == 7 && cols[0] == QLatin1String("method");
            if (in) rows.push_back(cols);
            continue;
        }
        if (cols.size() != 7) break;
        rows.push_back(cols);
    }
    return rows;
}

}  // namespace

class TestFineTuningWindow : public QObject {
    Q_OBJECT
    QTemporaryDir m_dir;

    static void prepareLlama(MainWindow& w, std::size_t budget) {
        w.setPersistState(false);
        w.setAskBeforeClose(false);
        w.show();
        w.setGeometry(QGuiApplication::primaryScreen()->availableGeometry());
        w.loadPreset(QStringLiteral("llama-tiny"));
        hr::TrainConfig c = w.trainConfig();
        c.device = "cpu";
        c.memory_limit = budget;
        w.setTrainConfig(c);
        w.tabs()->setCurrentWidget(w.memoryPlan());
        w.memoryPlan()->updateNow();
    }

    static void shoot(MainWindow& w, const QString& name) {
        MemoryPlanPanel* plan = w.memoryPlan();
        auto* scroll = plan->findChild<QScrollArea*>();
        QVERIFY(scroll);
        QTest::qWait(100);  // the layouts settle
        scroll->verticalScrollBar()->setValue(plan->fineTuningBox()->y() - 8);
        QTest::qWait(50);
        // every row inside its group box (none clipped)
        QVERIFY2(plan->fineTuningView()->geometry().bottom() < plan->fineTuningBox()->height(),
                 qPrintable(QStringLiteral("table bottom %1, box height %2")
                                .arg(plan->fineTuningView()->geometry().bottom())
                                .arg(plan->fineTuningBox()->height())));
        const QPixmap shot = w.grab();
        QVERIFY2(shot.width() <= 1366 && shot.height() <= 768 && shot.width() >= 1300,
                 qPrintable(QStringLiteral("%1 x %2").arg(shot.width()).arg(shot.height())));
        // the whole table lies inside the tab's visible area at 1366 x 768: no column cut off on the right
        const QRect table(plan->fineTuningView()->mapTo(scroll->viewport(), QPoint(0, 0)), plan->fineTuningView()->size());
        QVERIFY2(scroll->viewport()->rect().contains(table),
                 qPrintable(QStringLiteral("table %1,%2 %3 x %4 in a %5 x %6 view").arg(table.x()).arg(table.y())
                                .arg(table.width()).arg(table.height()).arg(scroll->viewport()->width())
                                .arg(scroll->viewport()->height())));
        const QByteArray dir = qgetenv("HEADROOM_SHOT_DIR");
        if (!dir.isEmpty()) QVERIFY(shot.save(QString::fromLocal8Bit(dir) + QLatin1Char('/') + name));
    }

private slots:
    void initTestCase() {
        QStandardPaths::setTestModeEnabled(true);
        QCoreApplication::setOrganizationName(QStringLiteral("HeadroomTest"));
        QVERIFY(m_dir.isValid());
        qputenv("HEADROOM_DB", m_dir.filePath(QStringLiteral("runs.sqlite")).toUtf8());
        QCOMPARE(installTranslators(QStringLiteral("en")), QStringLiteral("en"));
    }

    void cellsAreWhatPlanBudgetPrints() {
        const std::size_t budget = std::size_t(64) << 20;
        MainWindow w;
        prepareLlama(w, budget);
        MemoryPlanPanel* plan = w.memoryPlan();
        QVERIFY2(plan->hasPlan(), qPrintable(plan->errorText()));
        QVERIFY(plan->fineTuningBox()->isVisibleTo(plan));
        // computed on a worker: the window answers while it runs
        QVERIFY(QTest::qWaitFor([&] { return !plan->isFineTuningBusy(); }, 600000));
        QTableWidget* t = plan->fineTuningView();
        QCOMPARE(plan->fineTuningBudget(), budget);
        QCOMPARE(t->rowCount(), 12);  // 3 methods x checkpointing x ZeRO-3
        QCOMPARE(t->columnCount(), 7);

        QString text;
        const std::vector<QStringList> cli = ftw_cliRows(w.trainConfig(), budget, &text);
        QVERIFY2(cli.size() == 13, qPrintable(text));
        for (int k = 0; k < 7; ++k) QCOMPARE(t->horizontalHeaderItem(k)->text(), cli[0][k]);
        int numbers = 0;
        for (int r = 0; r < 12; ++r)
            for (int k = 0; k < 7; ++k) {
                QCOMPARE(t->item(r, k)->text(), cli[std::size_t(r) + 1][k]);
                if (k >= 3 && t->item(r, k)->text() != QLatin1String("-")) ++numbers;
            }
        QVERIFY2(numbers > 12, qPrintable(text));  // most cells hold bytes: a table, not dashes
        QVERIFY(plan->fineTuningLabel()->text().contains(QStringLiteral("64.00 MiB")) ||
                plan->fineTuningLabel()->text().contains(QStringLiteral("64 MiB")));

        // another budget: recomputed, and equal to the command again
        const std::size_t smaller = std::size_t(24) << 20;
        hr::TrainConfig c = w.trainConfig();
        c.memory_limit = smaller;
        w.setTrainConfig(c);
        plan->updateNow();
        QVERIFY(QTest::qWaitFor([&] { return !plan->isFineTuningBusy() && plan->fineTuningBudget() == smaller; }, 600000));
        const std::vector<QStringList> cli2 = ftw_cliRows(w.trainConfig(), smaller, &text);
        QVERIFY2(cli2.size() == 13, qPrintable(text));
        bool differs = false;
        for (int r = 0; r < 12; ++r)
            for (int k = 3; k < 7; ++k) {
                QCOMPARE(t->item(r, k)->text(), cli2[std::size_t(r) + 1][k]);
                differs = differs || cli2[std::size_t(r) + 1][k] != cli[std::size_t(r) + 1][k];
            }
        QVERIFY(differs);  // fewer configurations fit 24 MiB
        shoot(w, QStringLiteral("fine-tuning-en.png"));

        // not a language model: no table
        w.loadPreset(QStringLiteral("mlp"));
        plan->updateNow();
        QVERIFY(!plan->fineTuningBox()->isVisibleTo(plan));
    }

    void chineseWindow() {
        QCOMPARE(installTranslators(QStringLiteral("zh_CN")), QStringLiteral("zh_CN"));
        {
            MainWindow w;
            prepareLlama(w, std::size_t(64) << 20);
            MemoryPlanPanel* plan = w.memoryPlan();
            QVERIFY(QTest::qWaitFor([&] { return !plan->isFineTuningBusy(); }, 600000));
            QCOMPARE(plan->fineTuningView()->rowCount(), 12);
            // translated: the group, its note and the header are not the English texts
            QVERIFY(plan->fineTuningBox()->title() != QLatin1String("Fine-tuning on 1 to 8 cards"));
            QVERIFY(!plan->fineTuningLabel()->text().contains(QLatin1String("fastest")));
            QVERIFY(plan->fineTuningView()->horizontalHeaderItem(0)->text() != QLatin1String("method"));
            shoot(w, QStringLiteral("fine-tuning-zh_CN.png"));
        }
        installTranslators(QStringLiteral("en"));
    }
};

// on Qt's offscreen platform with a 1366 x 768 screen (tests/support/laptop_screen.h)
int main(int argc, char** argv) { return hrtest::run_on_laptop_screen<TestFineTuningWindow>(argc, argv); }
#include "test_fine_tuning_window.moc"
