// The Memory plan tab (issue 5): the prediction shown is the planner's for the current setup, it
// follows edits, "Fit to device" applies a strategy that fits, after a run predicted and measured
// agree per category, and an out-of-memory run offers a configuration that fits and runs.
#include <QAction>
#include <QCheckBox>
#include <QComboBox>
#include <QDoubleSpinBox>
#include <QLabel>
#include <QListWidget>
#include <QPushButton>
#include <QSignalSpy>
#include <QSpinBox>
#include <QStandardItemModel>
#include <QStandardPaths>
#include <QTabWidget>
#include <QTableWidget>
#include <QTemporaryDir>
#include <QTest>

#include "builder/ModelBuilder.h"
#include "charts/MemoryCompareChart.h"
#include "charts/PlanBarChart.h"
#include "gui/MainWindow.h"
#include "gui/MemoryPlanPanel.h"
#include "gui/OutOfMemoryDialog.h"
#include "gui/TrainingSetupPanel.h"
#include "store/run_store.h"

using hr::MemCategory;

class TestMemoryPlan : public QObject {
    Q_OBJECT
private:
    QTemporaryDir m_dir;
    static hr::TrainConfig config(hrapp::MainWindow& w) {
        hr::TrainConfig c = w.trainConfig();
        c.data = "synthetic";
        c.epochs = 1;
        c.steps = 4;
        c.batch = 64;
        c.optimizer.kind = "sgd";
        c.optimizer.lr = 0.05;
        c.optimizer.momentum = 0.9;
        c.threads = 2;
        c.evaluate_each_epoch = false;
        return c;
    }
    static void prepare(hrapp::MainWindow& w) {
        w.setPersistState(false);
        w.setAskBeforeClose(false);
        w.show();
        w.setTrainConfig(config(w));
        w.memoryPlan()->updateNow();
    }
    static hr::MemoryPlan predicted(hrapp::MainWindow& w) {
        return hr::predict_memory(hrapp::MemoryPlanPanel::requestFor(w.trainConfig()));
    }

private slots:
    void initTestCase() {
        QStandardPaths::setTestModeEnabled(true);
        QCoreApplication::setOrganizationName(QStringLiteral("HeadroomTest"));
        QVERIFY(m_dir.isValid());
        qputenv("HEADROOM_DB", m_dir.filePath(QStringLiteral("runs.sqlite")).toUtf8());
    }

    void viewShowsThePlannersPrediction() {
        hrapp::MainWindow w;
        prepare(w);
        hrapp::MemoryPlanPanel* plan = w.memoryPlan();
        QCOMPARE(w.tabs()->currentWidget(), plan);  // visible before Start without hunting
        QVERIFY2(plan->hasPlan(), qPrintable(plan->errorText()));
        const hr::MemoryPlan expect = predicted(w);
        QCOMPARE(plan->plan().device_total, expect.device_total);
        QCOMPARE(plan->barChart()->deviceTotal(), expect.device_total);
        for (MemCategory c : hr::all_categories()) QCOMPARE(plan->barChart()->barBytes(c), hr::at(expect.device, c));
        QCOMPARE(plan->layerTable()->rowCount(), int(expect.layers.size()));
        QVERIFY(plan->barChart()->capacity() > 0);  // the RAM's free bytes
        QVERIFY(plan->summaryLabel()->text().contains(QString::fromStdString(hr::format_bytes(expect.device_total))));

        // an invalid model: the view says so
        hr::ModelSpec bad = w.trainConfig().model;
        bad.layers.front().attrs["in_channels"] = 7;
        w.builder()->resetSpec(bad);
        QVERIFY(QTest::qWaitFor([&] { return !plan->hasPlan(); }, 3000));
        QVERIFY(!plan->errorText().isEmpty());
        QVERIFY(!plan->fitButton()->isEnabled());
        QCOMPARE(plan->layerTable()->rowCount(), 0);
    }

    void bf16LowersActivations() {
        hrapp::MainWindow w;
        prepare(w);
        hrapp::MemoryPlanPanel* plan = w.memoryPlan();
        const std::size_t fp32 = plan->barChart()->barBytes(MemCategory::activations);
        QVERIFY(fp32 > 0);
        auto* precision = w.setupPanel()->findChild<QComboBox*>(QStringLiteral("precisionCombo"));
        QVERIFY(precision && precision->isEnabled());
        QSignalSpy updated(plan, &hrapp::MemoryPlanPanel::planUpdated);
        precision->setCurrentIndex(precision->findData(QStringLiteral("bf16")));
        QVERIFY(updated.wait(3000));  // debounced
        QCOMPARE(w.trainConfig().strategy.precision, std::string("bf16"));
        const std::size_t bf16 = plan->barChart()->barBytes(MemCategory::activations);
        QVERIFY2(bf16 < fp32, qPrintable(QStringLiteral("%1 !< %2").arg(bf16).arg(fp32)));
        QCOMPARE(plan->plan().device_total, predicted(w).device_total);
        QVERIFY(plan->barChart()->barBytes(MemCategory::master_weights) > 0);
    }

    // What-if after training in the Training setup: the plan says what the weights would take stored so.
    // seed-cnn's weight tensors 10x25, 20x250, 50x320, 10x50, 60 % pruned then int4 (a scale per 64 values):
    // the non-zeros 100 + 2000 + 6400 + 200 at half a byte (4350 B), 10 + 80 + 250 + 10 scales (1400 B) and
    // the bitmasks 32 + 625 + 2000 + 63 B: 8470 B, instead of 21,750 x 4 = 87,000 B
    void whatIfShowsTheStoredBytes() {
        hrapp::MainWindow w;
        prepare(w);
        hrapp::MemoryPlanPanel* plan = w.memoryPlan();
        QVERIFY(plan->whatIfLabel()->isHidden());
        auto* prune = w.setupPanel()->findChild<QDoubleSpinBox*>(QStringLiteral("pruneSpin"));
        auto* quantize = w.setupPanel()->findChild<QComboBox*>(QStringLiteral("quantizeCombo"));
        QVERIFY(prune && quantize);
        prune->setValue(60);
        quantize->setCurrentIndex(quantize->findData(4));
        plan->updateNow();
        const QString text = plan->whatIfLabel()->text();
        QVERIFY(!plan->whatIfLabel()->isHidden());
        QVERIFY2(text.contains(QString::fromStdString(hr::format_bytes(8470))) &&
                     text.contains(QString::fromStdString(hr::format_bytes(87000))),
                 qPrintable(text));
        prune->setValue(0);
        quantize->setCurrentIndex(quantize->findData(0));
        plan->updateNow();
        QVERIFY(plan->whatIfLabel()->isHidden());
    }

    // QLoRA in the Training setup: the LoRA base box is offered once LoRA is on, and int4 takes seed-cnn's two
    // linear weights (50x320, 10x50: 66,000 B in f32) to 250 + 10 scales and 8250 B of codes (9290 B): the
    // plan's parameters drop by that, to the alignment of each tensor's start (256 B)
    void qloraBaseShrinksThePlannedParameters() {
        hrapp::MainWindow w;
        prepare(w);
        hrapp::MemoryPlanPanel* plan = w.memoryPlan();
        auto* rank = w.setupPanel()->findChild<QSpinBox*>(QStringLiteral("loraRankSpin"));
        auto* base = w.setupPanel()->findChild<QComboBox*>(QStringLiteral("loraBaseCombo"));
        QVERIFY(rank && base);
        QVERIFY(!base->isEnabled());
        rank->setValue(4);
        QVERIFY(base->isEnabled());
        plan->updateNow();
        const std::size_t f32 = plan->barChart()->barBytes(MemCategory::parameters);
        base->setCurrentIndex(base->findData(QStringLiteral("int4")));
        QCOMPARE(w.trainConfig().strategy.quantize_base, std::string("int4"));
        plan->updateNow();
        const std::size_t int4 = plan->barChart()->barBytes(MemCategory::parameters);
        QCOMPARE(plan->plan().device_total, predicted(w).device_total);
        const double saved = double(f32) - double(int4);
        QVERIFY2(std::abs(saved - (66000 - 9290)) <= 512, qPrintable(QStringLiteral("%1 -> %2").arg(f32).arg(int4)));
        QCOMPARE(plan->plan().strategy.lora_base_bits, 4);
        // LoRA off: the base box goes grey and the config carries no quantised base
        rank->setValue(0);
        QVERIFY(!base->isEnabled());
        QCOMPARE(w.trainConfig().strategy.quantize_base, std::string("none"));
    }

    void checkpointChoicesAndShardingState() {
        hrapp::MainWindow w;
        prepare(w);
        auto* ck = w.setupPanel()->findChild<QComboBox*>(QStringLiteral("checkpointCombo"));
        QVERIFY(ck && ck->isEnabled());
        for (const char* k : {"none", "all", "every:2", "auto", "list"}) QVERIFY2(ck->findData(QString::fromLatin1(k)) >= 0, k);
        ck->setCurrentIndex(ck->findData(QStringLiteral("list")));
        auto* list = w.setupPanel()->findChild<QListWidget*>(QStringLiteral("checkpointBlockList"));
        QVERIFY(list);
        QCOMPARE(list->count(), int(hr::checkpoint_blocks(w.trainConfig().model).size()));
        QVERIFY(list->count() >= 2);
        list->item(1)->setCheckState(Qt::Checked);
        QCOMPARE(w.trainConfig().strategy.checkpoint, std::string("list:1"));
        w.memoryPlan()->updateNow();
        QCOMPARE(w.memoryPlan()->plan().strategy.checkpoint_blocks, std::vector<int>{1});
        hr::TrainConfig c = w.trainConfig();
        c.strategy.checkpoint = "list:0,1";
        w.setTrainConfig(c);
        QCOMPARE(w.trainConfig().strategy.checkpoint, std::string("list:0,1"));
        // sharding is off for one process, with the reason; on with several ranks (issue 10), where the
        // window's config carries the stage and "None" is not offered
        auto* sharding = w.setupPanel()->findChild<QComboBox*>(QStringLiteral("shardingCombo"));
        auto* ranks = w.setupPanel()->findChild<QComboBox*>(QStringLiteral("ranksCombo"));
        QVERIFY(sharding && ranks);
        QVERIFY(!sharding->isEnabled());
        QVERIFY(sharding->toolTip().contains(QStringLiteral("several ranks")));
        QCOMPARE(w.trainConfig().strategy.shard, std::string("none"));
        ranks->setCurrentIndex(ranks->findData(QStringLiteral("cpu:2")));
        QVERIFY(sharding->isEnabled());
        QCOMPARE(w.setupPanel()->ranks(), 2);
        QCOMPARE(w.trainConfig().strategy.shard, std::string("dp"));
        sharding->setCurrentIndex(sharding->findData(QStringLiteral("zero3")));
        QCOMPARE(w.trainConfig().strategy.shard, std::string("zero3"));
        // stages x 2 data-parallel replicas need an even number of ranks, 4 or more: offered, not selectable on 2
        {
            auto* items = qobject_cast<QStandardItemModel*>(sharding->model());
            for (const char* replicated : {"pipeline-dp", "tp-head-dp"}) {  // (a split head's parts x 2 too)
                const int pd = sharding->findData(QLatin1String(replicated));
                QVERIFY(items && pd >= 0);
                QVERIFY(!items->item(pd)->isEnabled());
            }
        }
        ranks->setCurrentIndex(0);
        QCOMPARE(w.trainConfig().strategy.shard, std::string("none"));
        // parameter offload (ZeRO-Infinity): zero3 on the one rank, the optimizer on the host too; the plan
        // keeps no parameters or gradients on the device and says what moves per step
        auto* params = w.setupPanel()->findChild<QCheckBox*>(QStringLiteral("offloadParamsCheck"));
        auto* optimizer = w.setupPanel()->findChild<QCheckBox*>(QStringLiteral("offloadCheck"));
        QVERIFY(params && optimizer);
        params->setChecked(true);
        QVERIFY(optimizer->isChecked() && !optimizer->isEnabled());
        hr::TrainConfig off = w.trainConfig();
        QVERIFY(off.strategy.offload_parameters && off.strategy.offload_optimizer);
        QCOMPARE(off.strategy.shard, std::string("zero3"));
        w.memoryPlan()->updateNow();
        const hr::MemoryPlan p = w.memoryPlan()->plan();
        QCOMPARE(hr::at(p.device, hr::MemCategory::parameters), std::size_t(0));
        QVERIFY(hr::at(p.host, hr::MemCategory::parameters) > 0 && p.offload_bytes > 0);
        // several ranks: the Sharding box shows zero3 and stays there
        ranks->setCurrentIndex(ranks->findData(QStringLiteral("cpu:2")));
        QVERIFY(!sharding->isEnabled());
        QCOMPARE(sharding->currentData().toString(), QStringLiteral("zero3"));
        QCOMPARE(w.trainConfig().strategy.shard, std::string("zero3"));
        ranks->setCurrentIndex(0);
        params->setChecked(false);
        QVERIFY(optimizer->isEnabled());
        QVERIFY(!w.trainConfig().strategy.offload_parameters);
        QCOMPARE(w.trainConfig().strategy.shard, std::string("none"));
        // a configuration with it (a run's, Continue) shows it
        w.setTrainConfig(off);
        QVERIFY(params->isChecked());
        QVERIFY(w.trainConfig().strategy.offload_parameters);
        params->setChecked(false);
        optimizer->setChecked(false);
    }

    void fitToDeviceAppliesAStrategyThatFits() {
        hrapp::MainWindow w;
        prepare(w);
        hrapp::MemoryPlanPanel* plan = w.memoryPlan();
        const std::size_t plain = plan->plan().device_total;
        auto* limit = w.setupPanel()->findChild<QSpinBox*>(QStringLiteral("memoryLimitSpin"));
        QVERIFY(limit && limit->isEnabled());
        const int mib = int(plain / 2 >> 20) > 0 ? int(plain / 2 >> 20) : 1;
        limit->setValue(mib);
        QCOMPARE(w.trainConfig().memory_limit, std::size_t(mib) << 20);
        plan->updateNow();
        QVERIFY(plan->plan().device_total > plan->capacity());  // does not fit yet
        QCOMPARE(plan->capacity(), std::size_t(mib) << 20);
        QSignalSpy fitted(plan, &hrapp::MemoryPlanPanel::fitFinished);
        QTest::mouseClick(plan->fitButton(), Qt::LeftButton);
        // the search runs off the GUI thread: the window keeps handling events meanwhile
        QVERIFY(plan->isSearching());
        QVERIFY(!plan->fitButton()->isEnabled());
        QVERIFY(fitted.wait(120000));
        QVERIFY(!plan->isSearching());
        QVERIFY(plan->lastSearch().best >= 0);
        // the ranking lists the Pareto front; "All candidates" every one
        int front = 0;
        for (const hr::PlanCandidate& x : plan->lastSearch().candidates) front += x.pareto;
        QCOMPARE(plan->rankingTable()->rowCount(), front);
        QCOMPARE(plan->rankingTable()->item(0, 0)->data(Qt::UserRole).toInt(), plan->lastSearch().best);
        plan->allCandidatesBox()->setChecked(true);
        QCOMPARE(plan->rankingTable()->rowCount(), int(plan->lastSearch().candidates.size()));
        QVERIFY(plan->rankingTable()->rowCount() > front);
        const hr::MemoryPlan now = predicted(w);
        QVERIFY2(now.device_total <= (std::size_t(mib) << 20),
                 qPrintable(QString::fromStdString(hr::format_bytes(now.device_total))));
        QCOMPARE(plan->plan().device_total, now.device_total);
        const hr::PlanCandidate& best = plan->lastSearch().candidates[std::size_t(plan->lastSearch().best)];
        QCOMPARE(now.device_total, best.plan.device_total);
    }

    // A limit no configuration of one process fits: Fit to device says on how many ranks zero3 would, and
    // that many ranks (predicted by the planner for the rank with the largest share) do fit while half
    // as many do not.
    void fitToDeviceSaysHowManyRanksWouldFit() {
        hrapp::MainWindow w;
        prepare(w);
        hrapp::MemoryPlanPanel* plan = w.memoryPlan();
        // zero3 with every memory strategy on `ranks` ranks, at its leanest micro-batch (the rank batch,
        // /2, /4, /8 where they divide it)
        auto leanest = [&](int ranks) {
            hr::TrainConfig c = w.trainConfig();
            c.strategy.shard = "zero3";
            c.strategy.precision = "bf16";
            c.strategy.checkpoint = "all";
            c.strategy.offload_optimizer = true;
            const std::int64_t rankBatch = (c.batch + ranks - 1) / ranks;
            std::size_t best = SIZE_MAX;
            for (std::int64_t d : {1, 2, 4, 8}) {
                if (rankBatch % d != 0 || c.batch % ranks != 0) continue;
                c.strategy.micro_batch = d == 1 ? 0 : rankBatch / d;
                hr::PlanRequest r = hrapp::MemoryPlanPanel::requestFor(c);
                r.world_size = ranks;
                r.rank = -1;
                best = std::min(best, hr::plan_fit_bytes(hr::predict_memory(r)));
            }
            return best;
        };
        // a limit (whole MiB, as the box takes it) that some number of zero3 ranks fit and one process does not
        int mib = 0;
        for (int n = 64; n >= 2 && mib == 0; n /= 2) {
            const int m = int((leanest(n) + (1 << 20) - 1) >> 20);
            if (hr::search_plans(hrapp::MemoryPlanPanel::requestFor(w.trainConfig()), std::size_t(m) << 20).best < 0) mib = m;
        }
        QVERIFY2(mib > 0, "no limit between what ranks and one process fit");
        auto* limit = w.setupPanel()->findChild<QSpinBox*>(QStringLiteral("memoryLimitSpin"));
        limit->setValue(mib);
        plan->updateNow();
        QSignalSpy fitted(plan, &hrapp::MemoryPlanPanel::fitFinished);
        QTest::mouseClick(plan->fitButton(), Qt::LeftButton);
        QVERIFY(fitted.wait(120000));
        const hr::PlanSearch& s = plan->lastSearch();
        QCOMPARE(s.best, -1);
        QVERIFY(s.ranks_needed >= 2);
        const QString status = plan->findChild<QLabel*>(QStringLiteral("fitStatus"))->text();
        QVERIFY2(status.contains(QStringLiteral("sharded, it needs %1 ranks: with --ranks %1 ").arg(s.ranks_needed)),
                 qPrintable(status));
        QVERIFY(status.contains(QStringLiteral("--shard zero3")));
        QVERIFY(leanest(s.ranks_needed) <= s.budget);
        QVERIFY(s.ranks_needed == 2 || leanest(s.ranks_needed / 2) > s.budget);
        w.setTrainConfig(config(w));  // the limit back, for the tests after this one
    }

    void runShowsPredictedEqualToMeasured() {
        hrapp::MainWindow w;
        prepare(w);
        QSignalSpy finished(&w, &hrapp::MainWindow::runFinished);
        w.startAction()->trigger();
        QVERIFY(finished.wait(300000));
        const hr::TrainResult r = w.lastResult();
        QCOMPARE(QString::fromStdString(r.status), QStringLiteral("finished"));
        hrapp::MemoryPlanPanel* plan = w.memoryPlan();
        QVERIFY(plan->hasRunPlan());
        QTableWidget* t = plan->comparisonTable();
        QVERIFY(t->rowCount() >= 4);
        int rows = 0;
        for (MemCategory c : hr::all_categories()) {
            const std::size_t p = hr::at(plan->runPlan().device, c), m = hr::at(r.ledger.peak, c);
            QVERIFY2(p == m, qPrintable(QStringLiteral("%1: predicted %2, measured %3")
                                            .arg(QString::fromLatin1(hr::category_name(c)))
                                            .arg(p)
                                            .arg(m)));
            if (p || m) ++rows;
        }
        for (int i = 0; i < rows + 1; ++i) {  // each category and the total
            QCOMPARE(t->item(i, 1)->text(), t->item(i, 2)->text());
            QCOMPARE(t->item(i, 3)->text(), QStringLiteral("0.00%"));
        }
        QCOMPARE(plan->compareChart()->categoryCount(), rows);
        // the history holds the prediction next to the measurement
        QVERIFY(w.lastRunId() > 0);
        for (const hrapp::MemoryCategoryRow& row : w.runStore()->memory(w.lastRunId()))
            QCOMPARE(row.predicted, qint64(hr::at(plan->runPlan().device, hr::category_from_name(row.category.toStdString()))));
    }

    void outOfMemoryOffersAConfigurationThatRuns() {
        hrapp::MainWindow w;
        prepare(w);
        const std::size_t plain = w.memoryPlan()->plan().device_total;
        hr::TrainConfig c = w.trainConfig();
        c.memory_limit = std::max<std::size_t>(1, (plain / 2) >> 20) << 20;
        w.setTrainConfig(c);
        QSignalSpy finished(&w, &hrapp::MainWindow::runFinished);
        w.start();
        QVERIFY(finished.wait(300000));
        const hr::TrainResult r = w.lastResult();
        QVERIFY(r.out_of_memory);
        hrapp::OutOfMemoryDialog* dlg = nullptr;
        QVERIFY(QTest::qWaitFor([&] { return (dlg = w.findChild<hrapp::OutOfMemoryDialog*>()) != nullptr; }, 5000));
        QVERIFY(dlg->isVisible());
        QVERIFY(QTest::qWaitFor([&] { return !dlg->isSearching(); }, 120000));
        QVERIFY(dlg->hasSuggestion());
        QVERIFY(dlg->applyAndRestartButton()->isEnabled());
        auto* error = dlg->findChild<QWidget*>(QStringLiteral("oomError"));
        QVERIFY(error);
        QVERIFY(dlg->findChild<QLabel*>(QStringLiteral("oomSuggestion"))->text().contains(QStringLiteral("headroom train")));
        QTest::mouseClick(dlg->applyAndRestartButton(), Qt::LeftButton);
        QVERIFY(QTest::qWaitFor([&] { return w.isRunning() || finished.count() >= 2; }, 5000));
        QVERIFY(finished.count() >= 2 || finished.wait(300000));
        QCOMPARE(QString::fromStdString(w.lastResult().status), QStringLiteral("finished"));
        QVERIFY(!w.lastResult().out_of_memory);
        QCOMPARE(w.trainConfig().memory_limit, c.memory_limit);  // the same (small) card
        QVERIFY(w.trainConfig().strategy.micro_batch > 0 || w.trainConfig().strategy.precision != "fp32" ||
                w.trainConfig().strategy.checkpoint != "none");
    }
};

QTEST_MAIN(TestMemoryPlan)
#include "test_memory_plan.moc"
