// The screenshot harness of scripts/screenshot (not part of the product): renders the main window
// during a short training run and writes a PNG.
//
//     headroom-screenshot OUT.png [monitor|runs|plan|text|table|whatif]
//
// HEADROOM_LANG=en|zh_CN picks the language; the user's settings are left alone (Qt's test mode), the
// theme is light. Runs offscreen with QT_QPA_PLATFORM=offscreen (scripts/screenshot gives it a 1920 x 1080
// screen), or on a display (xvfb-run -s '-screen 0 1366x768x24'). HEADROOM_SHOT_SIZE=WxH sizes the window
// (default 1600x1000; the window fits it to the screen), =open leaves it at the size it opens at;
// HEADROOM_SHOT_SCREEN=1 grabs the whole screen instead of the window (is all of it on the screen?);
// HEADROOM_SHOT_SWITCH=N shows tab N (0: Memory plan, 1: Monitor, 2: Sample, 3: Runs, 4: Log) when it grabs,
// HEADROOM_SHOT_DOCK=NAME raises that dock (builderDock, dataDock, setupDock).
#include <QApplication>
#include <QComboBox>
#include <QFileInfo>
#include <QScreen>
#include <QStandardPaths>
#include <QTabWidget>
#include <QDockWidget>
#include <QTimer>

#include <cstdio>
#include <memory>

#include "builder/LayerPath.h"
#include "builder/ModelBuilder.h"
#include "charts/ChartStyle.h"
#include "data/dataset.h"
#include "gui/DataPanel.h"
#include "gui/MainWindow.h"
#include "gui/MemoryPlanPanel.h"
#include "gui/MonitorView.h"
#include "gui/RunsView.h"
#include "gui/TrainingSetupPanel.h"
#include "gui/gui_main.h"
#include "session/RunController.h"
#include "session/TrainingSession.h"

using namespace hrapp;

namespace {

// Starts a short run, grabs the window after the third epoch (mid-run), writes the PNG and quits.
// tab "runs": waits for the run to end and shows the Runs tab instead, with the newest runs of the
// history (HEADROOM_DB) selected and overlaid; tab "plan": the Memory plan tab after a short run.
void setUpScreenshot(MainWindow& w, const QString& out, const QString& tab) {
    const bool runsTab = tab == QLatin1String("runs");
    w.setAskBeforeClose(false);
    w.setPersistState(false);
    const QString size = qEnvironmentVariable("HEADROOM_SHOT_SIZE", QStringLiteral("1600x1000"));
    if (size != QLatin1String("open")) {
        const QStringList wh = size.split(QLatin1Char('x'));
        w.resize(wh.value(0).toInt(), wh.value(1).toInt());
    }
    hr::TrainConfig c = w.trainConfig();
    const bool fashion = hr::probe_dataset("fashion-mnist").available;
    c.data = fashion ? "fashion-mnist" : "synthetic";
    c.train_limit = fashion ? 6144 : 0;
    c.test_limit = fashion ? 1024 : 0;
    c.epochs = 4;
    c.batch = 64;
    c.optimizer.kind = "sgd";
    c.optimizer.lr = 0.05;
    c.optimizer.momentum = 0.9;
    w.setTrainConfig(c);
    w.builder()->selectPath({7});  // show a layer's properties too
    auto epochs = std::make_shared<int>(0);
    auto save = [&w, out] {
        if (qEnvironmentVariableIntValue("HEADROOM_SHOT_SCREEN") == 1) w.screen()->grabWindow(0).save(out);
        else w.grab().save(out);
        std::fprintf(stderr, "window %d x %d at %d,%d (minimum %d x %d); screen %d x %d\n", w.frameGeometry().width(),
                     w.frameGeometry().height(), w.x(), w.y(), w.minimumSizeHint().width(), w.minimumSizeHint().height(),
                     w.screen()->availableGeometry().width(), w.screen()->availableGeometry().height());
        if (qEnvironmentVariableIntValue("HEADROOM_SHOT_DUMP") == 1) {  // the layout in numbers
            for (QDockWidget* d : w.findChildren<QDockWidget*>())
                std::fprintf(stderr, "  dock %s: %d x %d (minimum %d x %d)\n", qPrintable(d->objectName()), d->width(),
                             d->height(), d->minimumSizeHint().width(), d->minimumSizeHint().height());
            std::fprintf(stderr, "  setup panel: %d x %d (minimum %d x %d)\n", w.setupPanel()->sizeHint().width(),
                         w.setupPanel()->sizeHint().height(), w.setupPanel()->minimumSizeHint().width(),
                         w.setupPanel()->minimumSizeHint().height());
            for (QWidget* f : w.setupPanel()->findChildren<QWidget*>())
                if (f->isVisibleTo(w.setupPanel()) && f->sizeHint().width() > 260)
                    std::fprintf(stderr, "    %s %s: %d\n", f->metaObject()->className(), qPrintable(f->objectName()),
                                 f->sizeHint().width());
            for (int i = 0; i < w.tabs()->count(); ++i)
                std::fprintf(stderr, "  tab %d: minimum %d x %d\n", i, w.tabs()->widget(i)->minimumSizeHint().width(),
                             w.tabs()->widget(i)->minimumSizeHint().height());
            for (QCustomPlot* c : w.findChildren<QCustomPlot*>()) {
                if (!c->isVisible()) continue;
                const QRect r = c->axisRect()->rect();
                std::fprintf(stderr, "  chart %s: %d x %d, data %d x %d (%.0f %%), legend %s %d x %d\n",
                             qPrintable(c->objectName()), c->width(), c->height(), r.width(), r.height(),
                             100.0 * r.width() * r.height() / (double(c->width()) * c->height()),
                             hrw::legendPlace(c) == hrw::LegendPlace::Beside ? "beside" : "below",
                             c->legend->outerRect().width(), c->legend->outerRect().height());
            }
        }
        w.close();
        qApp->quit();
    };
    auto grab = [&w, save] {
        const QString dock = qEnvironmentVariable("HEADROOM_SHOT_DOCK");  // (an empty name would match any dock)
        if (QDockWidget* d = dock.isEmpty() ? nullptr : w.findChild<QDockWidget*>(dock)) d->raise();
        if (!qEnvironmentVariableIsSet("HEADROOM_SHOT_SWITCH")) return QTimer::singleShot(300, &w, save);
        w.tabs()->setCurrentIndex(qEnvironmentVariableIntValue("HEADROOM_SHOT_SWITCH"));
        QTimer::singleShot(500, &w, save);
    };
    if (tab == QLatin1String("text")) {
        // before a run: gpt-tiny loaded, its own training settings in the panels, fortunes in the Data panel
        w.loadPreset(QStringLiteral("gpt-tiny"));
        for (QDockWidget* d : w.findChildren<QDockWidget*>())
            if (d->widget() == static_cast<QWidget*>(w.dataPanel()) || d->isAncestorOf(w.dataPanel())) d->raise();
        QTimer::singleShot(800, grab);
        return;
    }
    if (tab == QLatin1String("whatif")) {
        // before a run: the Memory plan tab with What-if after training set to 60 % pruned and int4 (of the
        // preset HEADROOM_SHOT_PRESET when set: gpt-tiny shows a language model's)
        if (qEnvironmentVariableIsSet("HEADROOM_SHOT_PRESET")) w.loadPreset(qEnvironmentVariable("HEADROOM_SHOT_PRESET"));
        hr::TrainConfig t = w.trainConfig();
        t.what_if.prune = 0.6;
        t.what_if.bits = 4;
        w.setTrainConfig(t);
        w.tabs()->setCurrentWidget(w.memoryPlan());
        QTimer::singleShot(800, grab);
        return;
    }
    if (tab == QLatin1String("table")) {
        // before a run: tabular-mlp on the table HEADROOM_SHOT_TABLE (a CSV), the Data panel with its columns;
        // or HEADROOM_SHOT_PRESET on the data HEADROOM_SHOT_DATA (cifar10:DIR, ...)
        const QString preset = qEnvironmentVariable("HEADROOM_SHOT_PRESET", QStringLiteral("tabular-mlp"));
        w.loadPreset(preset);
        hr::TrainConfig t = w.trainConfig();
        t.data = qEnvironmentVariableIsSet("HEADROOM_SHOT_DATA") ? qEnvironmentVariable("HEADROOM_SHOT_DATA").toStdString()
                                                          : "csv:" + qEnvironmentVariable("HEADROOM_SHOT_TABLE").toStdString();
        t.target = qEnvironmentVariable("HEADROOM_SHOT_TARGET").toStdString();
        w.setTrainConfig(t);
        for (QDockWidget* d : w.findChildren<QDockWidget*>())
            if (d->widget() == static_cast<QWidget*>(w.dataPanel()) || d->isAncestorOf(w.dataPanel())) d->raise();
        QTimer::singleShot(800, grab);
        return;
    }
    if (tab == QLatin1String("lora") || tab == QLatin1String("qlora")) {
        // the Memory plan tab after a short LoRA run of gpt-tiny on fortunes: rank-8 adapters on the block
        // projections, the rest frozen (predicted against measured; the strategy line); qlora: on an int4 base
        w.loadPreset(QStringLiteral("gpt-tiny"));
        hr::TrainConfig p = w.trainConfig();
        p.steps = 20;
        p.eval_tokens = 4096;
        p.strategy.lora_rank = 8;
        if (tab == QLatin1String("qlora")) p.strategy.quantize_base = "int4";
        w.setTrainConfig(p);
        QObject::connect(&w, &MainWindow::runFinished, &w, [&w, grab] {
            w.tabs()->setCurrentIndex(0);
            QTimer::singleShot(600, grab);
        });
    } else if (tab == QLatin1String("plan") || tab == QLatin1String("offload")) {
        // The Memory plan tab after a short run of resnet-mini with strategies: the prediction for
        // the setup, the host bar of the offloaded optimizer state and predicted against measured.
        w.loadPreset(QStringLiteral("resnet-mini"));
        hr::TrainConfig p = w.trainConfig();
        p.data = "synthetic";
        p.steps = 8;
        p.evaluate_each_epoch = false;
        p.optimizer.kind = "adam";
        p.optimizer.lr = 0.001;
        p.strategy.precision = "bf16";
        p.strategy.checkpoint = "every:2";
        p.strategy.micro_batch = 32;
        p.strategy.accumulate = 2;
        p.strategy.offload_optimizer = true;
        if (tab == QLatin1String("offload")) {  // parameters and gradients in host memory too, zero3 on one rank
            p.strategy.offload_parameters = true;
            p.strategy.shard = "zero3";
        }
        p.memory_limit = std::size_t(48) << 20;
        w.setTrainConfig(p);
        QObject::connect(&w, &MainWindow::runFinished, &w, [&w, grab] {
            w.tabs()->setCurrentIndex(0);
            QTimer::singleShot(600, grab);
        });
    } else if (tab == QLatin1String("ranks") || tab == QLatin1String("tp-head")) {
        // a run on CPU x 2 ranks with ZeRO-2 (child processes, issue 10), or with the head split over them
        // (tp-head, issue 23): the Monitor with memory per rank
        auto* ranks = w.setupPanel()->findChild<QComboBox*>(QStringLiteral("ranksCombo"));
        ranks->setCurrentIndex(ranks->findData(QStringLiteral("cpu:2")));
        auto* shard = w.setupPanel()->findChild<QComboBox*>(QStringLiteral("shardingCombo"));
        shard->setCurrentIndex(shard->findData(tab == QLatin1String("ranks") ? QStringLiteral("zero2") : tab));
        QObject::connect(w.runController(), &RunController::epochFinished, &w, [epochs, grab](const hr::EpochEvent&) {
            if (++*epochs == 3) QTimer::singleShot(300, grab);
        });
        QObject::connect(&w, &MainWindow::runFinished, &w, [epochs, grab] {
            if (*epochs < 3) QTimer::singleShot(300, grab);
        });
    } else if (runsTab) {
        QObject::connect(&w, &MainWindow::runFinished, &w, [&w, grab] {
            QTimer::singleShot(200, &w, [&w, grab] {
                RunsView* v = w.runsView();
                v->reload();
                QList<qint64> ids;
                for (int r = 0; r < qMin(3, v->rowCount()); ++r) ids << v->runIdAt(r);
                v->selectRuns(ids);
                w.tabs()->setCurrentWidget(v);
                QTimer::singleShot(400, grab);
            });
        });
    } else {
        QObject::connect(w.session(), &TrainingSession::epochFinished, &w, [epochs, grab](const hr::EpochEvent&) {
            if (++*epochs == 3) QTimer::singleShot(300, grab);
        });
        QObject::connect(&w, &MainWindow::runFinished, &w, [epochs, grab] {
            if (*epochs < 3) QTimer::singleShot(300, grab);
        });
    }
    QTimer::singleShot(200, &w, &MainWindow::start);
    QTimer::singleShot(240000, &w, grab);  // never hang
}

}  // namespace

int main(int argc, char** argv) {
    if (argc < 2) {
        std::fprintf(stderr, "usage: headroom-screenshot OUT.png [monitor|runs|plan|ranks]\n");
        return 2;
    }
    const QString out = QString::fromLocal8Bit(argv[1]);
    const QString tab = argc > 2 ? QString::fromLocal8Bit(argv[2]) : QStringLiteral("monitor");
    if (!qEnvironmentVariableIsSet("HEADROOM_PROGRAM"))  // multi-rank runs start the headroom next to this harness
        qputenv("HEADROOM_PROGRAM", (QFileInfo(QString::fromLocal8Bit(argv[0])).absolutePath() + QStringLiteral("/headroom")).toLocal8Bit());
    QStandardPaths::setTestModeEnabled(true);  // leave the user's settings and history alone
    GuiOptions options;
    options.theme = QStringLiteral("light");
    options.prepare = [out, tab](MainWindow& w) { setUpScreenshot(w, out, tab); };
    int qtArgc = 1;
    return run_gui(qtArgc, argv, options);
}
