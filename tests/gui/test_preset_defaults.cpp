// A preset's defaults (core/train/preset_training.h) are the same object in both front ends: `headroom
// train --preset NAME` with no other flag parses to hr::default_train_config(NAME), the window's
// configuration after loading the preset holds the same training settings (data, tokenizer, optimizer,
// schedule, batch, steps, validation interval) and shows them in its panels; flags override them one by
// one; leaving a language model for an image preset brings the generic settings back; `headroom presets`
// lists every preset with what it trains with. (tests/slow/test_preset_training.cpp trains gpt-tiny
// with them.) With no preset named, the data decides (issue 42, item 5): a table trains tabular-mlp, text
// gpt-tiny, images seed-cnn, by one rule (hr::default_preset_for_data) in `headroom train` and in the window
// until the person chooses a model; a preset the person names is kept and a mismatch refused with its reason.
#include <QtTest>
#include "test_support.h"

#include <QComboBox>
#include <QDoubleSpinBox>
#include <QFile>
#include <QLineEdit>
#include <QStatusBar>
#include <QSpinBox>
#include <QStandardPaths>
#include <QTemporaryDir>

#include <nlohmann/json.hpp>

#include "cli/cli.h"
#include "cli/flags.h"
#include "cli/output.h"
#include "gui/DataPanel.h"
#include "gui/MainWindow.h"
#include "gui/TrainingSetupPanel.h"
#include "nn/model_spec.h"
#include "programs.h"
#include "session/RunDefaults.h"
#include "train/config.h"
#include "train/preset_training.h"

using namespace hrapp;

namespace {

CliRequest parse(const QStringList& args) {
    const Subcommand* c = findSubcommand(QStringLiteral("train"));
    if (!c) qFatal("no train subcommand");
    return parseCommandLine(*c, args);
}

// The fields a preset's training sets, as JSON (train_config_to_json), so a difference prints by name.
nlohmann::json training(const hr::TrainConfig& c) {
    const nlohmann::json j = hr::train_config_to_json(c);
    nlohmann::json out;
    for (const char* k : {"data", "tokenizer", "optimizer", "schedule", "batch", "steps", "epochs", "eval_every"}) out[k] = j.at(k);
    return out;
}

// The whole configuration but the model (the CLI builds it after parsing, the window in its builder).
nlohmann::json withoutModel(const hr::TrainConfig& c) {
    nlohmann::json j = hr::train_config_to_json(c);
    j.erase("model");
    j.erase("model_source");
    return j;
}

// JSON text a failed comparison prints
QString text(const nlohmann::json& j) { return QString::fromStdString(j.dump()); }

// A table of 3 numeric columns and a class column "kind" of 2 classes.
QString writeTable(const QString& path) {
    QFile f(path);
    if (!f.open(QIODevice::WriteOnly)) qFatal("cannot write the table");
    f.write("a,b,c,kind\n");
    for (int i = 0; i < 40; ++i) f.write(QStringLiteral("%1,%2,%3,%4\n").arg(i).arg(i % 7).arg(i * 0.5).arg(i % 2 ? "odd" : "even").toUtf8());
    return path;
}

// A small UTF-8 text for a language model.
QString writeText(const QString& path) {
    QFile f(path);
    if (!f.open(QIODevice::WriteOnly)) qFatal("cannot write the text");
    for (int i = 0; i < 200; ++i)
        f.write(QStringLiteral("%1: the quick brown fox jumps over the lazy dog, and a penny saved is a penny earned.\n").arg(i).toUtf8());
    return path;
}

std::vector<std::string> allPresets() {
    std::vector<std::string> names = hr::preset_names();
    for (const std::string& n : hr::language_model_preset_names()) names.push_back(n);
    return names;
}

}  // namespace

class TestPresetDefaults : public QObject {
    Q_OBJECT
    QTemporaryDir m_dir;

private slots:
    void initTestCase() {
        QStandardPaths::setTestModeEnabled(true);
        QCoreApplication::setOrganizationName(QStringLiteral("HeadroomTest"));
        QVERIFY(m_dir.isValid());
        qputenv("HEADROOM_DB", m_dir.filePath(QStringLiteral("runs.sqlite")).toUtf8());
    }

    void everyLanguageModelBringsItsTraining() {
        for (const std::string& name : hr::language_model_preset_names()) {
            const hr::PresetTraining t = hr::preset_training(name);
            QVERIFY2(t.has_training, name.c_str());
            QCOMPARE(t.data, std::string("text:fortunes"));
            QCOMPARE(t.optimizer.kind, std::string("adamw"));
            QVERIFY(t.steps > 0 && t.batch > 0 && t.schedule.warmup_steps > 0 && t.schedule.warmup_steps < t.steps);
            // what it brings passes the same checks as any configuration
            hr::TrainConfig c = hr::default_train_config(name);
            c.model = hr::preset_model(name);
            hr::validate_train_config(c);
        }
        // resnet20 and tabular-mlp bring theirs (in epochs), the other image presets none
        for (const std::string& name : hr::preset_names()) {
            const bool own = name == "resnet20" || name == "tabular-mlp";
            QVERIFY2(hr::preset_training(name).has_training == own, name.c_str());
            if (!own) continue;
            hr::TrainConfig c = hr::default_train_config(name);
            c.model = hr::preset_model(name);
            hr::validate_train_config(c);
            QCOMPARE(c.steps, std::int64_t(0));
            QVERIFY(c.epochs > 1);
        }
        QCOMPARE(hr::default_train_config("resnet20").data, std::string("cifar10"));
        QCOMPARE(hr::default_train_config("tabular-mlp").data, std::string("fashion-mnist"));  // the user's table
        // an image preset's defaults are the generic ones the window always had
        const hr::TrainConfig seed = hr::default_train_config("seed-cnn");
        QCOMPARE(seed.optimizer.kind, std::string("sgd"));
        QCOMPARE(seed.optimizer.momentum, 0.9);
        QCOMPARE(seed.data, std::string("fashion-mnist"));
        QCOMPARE(seed.device, std::string("auto"));
        QCOMPARE(withoutModel(seed), withoutModel(hr::default_train_config("")));
    }

    void theCommandLineStartsFromTheSameDefaults() {
        for (const std::string& name : allPresets()) {
            const CliRequest r = parse({QStringLiteral("--preset"), QString::fromStdString(name)});
            QCOMPARE(text(withoutModel(r.config)), text(withoutModel(defaultTrainConfig(name))));
            QCOMPARE(text(withoutModel(defaultTrainConfig(name))), text(withoutModel(hr::default_train_config(name))));
        }
        // no --preset: seed-cnn's, the generic ones
        QCOMPARE(text(withoutModel(parse({}).config)), text(withoutModel(hr::default_train_config("seed-cnn"))));
        // --model: the generic ones too, whatever --preset would have brought
        QCOMPARE(text(training(parse({"--model", "x.json"}).config)), text(training(hr::default_train_config(""))));
    }

    void flagsOverrideThePresetsDefaults() {
        const hr::TrainConfig d = hr::default_train_config("gpt-tiny");
        hr::TrainConfig c = parse({"--preset", "gpt-tiny", "--lr", "0.01", "--batch", "4", "--steps", "10"}).config;
        QCOMPARE(c.optimizer.lr, 0.01);
        QCOMPARE(c.batch, std::int64_t(4));
        QCOMPARE(c.steps, std::int64_t(10));
        QCOMPARE(c.optimizer.kind, d.optimizer.kind);  // the rest stays the preset's
        QCOMPARE(c.optimizer.weight_decay, d.optimizer.weight_decay);
        QCOMPARE(c.schedule.kind, d.schedule.kind);
        QCOMPARE(c.data, d.data);
        // another optimizer starts from its own settings, not the preset's AdamW ones
        c = parse({"--preset", "gpt-tiny", "--optimizer", "sgd"}).config;
        QCOMPARE(c.optimizer.lr, 0.01);
        QCOMPARE(c.optimizer.weight_decay, 0.0);
        QCOMPARE(c.optimizer.momentum, 0.9);
        QCOMPARE(c.optimizer.grad_clip, 0.0);
        c = parse({"--preset", "gpt-tiny", "--optimizer", "adam", "--weight-decay", "0.01"}).config;
        QCOMPARE(c.optimizer.lr, 1e-3);
        QCOMPARE(c.optimizer.weight_decay, 0.01);
        // the preset's own optimizer named again keeps its settings
        QCOMPARE(parse({"--preset", "gpt-tiny", "--optimizer", "adamw"}).config.optimizer.lr, d.optimizer.lr);
        // epochs instead of the preset's steps (evaluated at the end of each)
        c = parse({"--preset", "gpt-tiny", "--epochs", "2"}).config;
        QCOMPARE(c.epochs, 2);
        QCOMPARE(c.steps, std::int64_t(0));
        QCOMPARE(c.eval_every, std::int64_t(0));
        // the evaluations follow the steps given: four a run, unless --eval-every is given too
        QCOMPARE(d.eval_every, d.steps / 4);
        QCOMPARE(parse({"--preset", "gpt-tiny", "--steps", "400"}).config.eval_every, std::int64_t(100));
        QCOMPARE(parse({"--preset", "gpt-tiny", "--steps", "3"}).config.eval_every, std::int64_t(1));
        QCOMPARE(parse({"--preset", "gpt-tiny", "--steps", "400", "--eval-every", "7"}).config.eval_every, std::int64_t(7));
        QCOMPARE(parse({"--preset", "gpt-tiny", "--eval-every", "9"}).config.eval_every, std::int64_t(9));
        c = parse({"--preset", "gpt-char", "--data", "text:/tmp/x.txt", "--tokenizer", "byte"}).config;
        QCOMPARE(c.data, std::string("text:/tmp/x.txt"));
        QCOMPARE(c.tokenizer, std::string("byte"));
        QCOMPARE(c.batch, hr::default_train_config("gpt-char").batch);
        // an image preset: adam's own rate, as before
        QCOMPARE(parse({"--optimizer", "adam"}).config.optimizer.lr, 1e-3);
        QCOMPARE(parse({"--optimizer", "adam", "--lr", "0.02"}).config.optimizer.lr, 0.02);
    }

    void theWindowLoadsThePresetsDefaults() {
        MainWindow w;
        w.setAskBeforeClose(false);
        w.setPersistState(false);
        // a choice of the person's that a preset does not make: kept across presets
        auto* precision = w.setupPanel()->findChild<QComboBox*>(QStringLiteral("precisionCombo"));
        QVERIFY(precision);
        precision->setCurrentIndex(precision->findData(QStringLiteral("bf16")));
        for (const std::string& name : hr::language_model_preset_names()) {
            w.loadPreset(QString::fromStdString(name));
            const hr::TrainConfig c = w.trainConfig();
            QCOMPARE(text(training(c)), text(training(hr::default_train_config(name))));
            // every field, those the panels do not show included (gradient clipping, eps, decay scope)
            QCOMPARE(hr::train_config_to_json(c)["optimizer"].dump(),
                     hr::train_config_to_json(hr::default_train_config(name))["optimizer"].dump());
            QCOMPARE(c.strategy.precision, std::string("bf16"));
            QCOMPARE(c.model, hr::preset_model(name));
            // the panels show them
            QVERIFY(w.dataPanel()->isText());
            QCOMPARE(w.dataPanel()->dataSpec(), QStringLiteral("text:fortunes"));
            QCOMPARE(w.dataPanel()->tokenizerSpec().toStdString(), hr::preset_training(name).tokenizer);
        }
        // the window's run is the command line's run
        w.loadPreset(QStringLiteral("gpt-tiny"));
        hr::TrainConfig window = w.trainConfig();
        hr::TrainConfig cli = parse({"--preset", "gpt-tiny", "--precision", "bf16"}).config;
        window.device = cli.device = "cpu";  // the device combo offers what this machine has
        nlohmann::json a = withoutModel(window), b = withoutModel(cli);
        for (const char* k : {"threads", "seed", "memory_limit", "evaluate_each_epoch"}) a.erase(k), b.erase(k);
        QCOMPARE(text(a), text(b));
        // the window's Steps field moves a preset's evaluations with it, as --steps does
        auto* steps = w.setupPanel()->findChild<QSpinBox*>(QStringLiteral("stepsSpin"));
        QVERIFY(steps);
        steps->setValue(400);
        QCOMPARE(w.trainConfig().eval_every, parse({"--preset", "gpt-tiny", "--steps", "400"}).config.eval_every);
        QCOMPARE(w.trainConfig().eval_every, std::int64_t(100));
        steps->setValue(int(hr::default_train_config("gpt-tiny").steps));
        // back to an image preset: the generic settings, the person's precision kept
        w.loadPreset(QStringLiteral("seed-cnn"));
        const hr::TrainConfig back = w.trainConfig();
        QCOMPARE(text(training(back)), text(training(hr::default_train_config("seed-cnn"))));
        QVERIFY(!w.dataPanel()->isText());
        QCOMPARE(back.strategy.precision, std::string("bf16"));
        // one image preset to another leaves the person's data and optimizer alone
        auto* batch = w.setupPanel()->findChild<QSpinBox*>(QStringLiteral("batchSpin"));
        QVERIFY(batch);
        batch->setValue(32);
        w.loadPreset(QStringLiteral("lenet5"));
        QCOMPARE(w.trainConfig().batch, std::int64_t(32));
        // the boxes stop where core's checks do (train/config.h), as the flags (test_cli_flags): the largest
        // batch a run accepts can be typed, one more cannot
        QCOMPARE(std::int64_t(batch->maximum()), hr::kMaxBatch);
        QCOMPARE(std::int64_t(steps->maximum()), hr::kMaxSteps);
        auto* micro = w.setupPanel()->findChild<QSpinBox*>(QStringLiteral("microBatchSpin"));
        QVERIFY(micro);
        QCOMPARE(std::int64_t(micro->maximum()), hr::kMaxBatch);
        batch->setValue(int(hr::kMaxBatch));
        QCOMPARE(w.trainConfig().batch, hr::kMaxBatch);
        batch->setValue(32);
    }

    // What-if after training (issue 23 item 4): the window's Prune and Quantise fields are --prune and
    // --quantize; a language model has none (the box is disabled and the run carries no what-if)
    void theWindowsWhatIfIsTheFlags() {
        MainWindow w;
        w.setAskBeforeClose(false);
        w.setPersistState(false);
        w.loadPreset(QStringLiteral("seed-cnn"));
        auto* prune = w.setupPanel()->findChild<QDoubleSpinBox*>(QStringLiteral("pruneSpin"));
        auto* quantize = w.setupPanel()->findChild<QComboBox*>(QStringLiteral("quantizeCombo"));
        auto* box = w.setupPanel()->findChild<QWidget*>(QStringLiteral("whatIfBox"));
        QVERIFY(prune && quantize && box);
        QVERIFY(!w.trainConfig().what_if.active());  // off unless asked for, as on the command line
        prune->setValue(50);
        quantize->setCurrentIndex(quantize->findData(4));
        const hr::TrainConfig cli = parse({"--prune", "0.5", "--quantize", "int4"}).config;
        QCOMPARE(hr::train_config_to_json(w.trainConfig())["what_if"].dump(), hr::train_config_to_json(cli)["what_if"].dump());
        QVERIFY(cli.what_if.active());
        // a language model's run takes the what-if too (its validation loss before and after)
        w.loadPreset(QStringLiteral("gpt-tiny"));
        QVERIFY(box->isEnabled());
        QCOMPARE(w.trainConfig().what_if.bits, 4);
        QCOMPARE(w.trainConfig().what_if.prune, 0.5);
        hr::validate_train_config(w.trainConfig());
        w.loadPreset(QStringLiteral("seed-cnn"));
        QVERIFY(box->isEnabled());
        quantize->setCurrentIndex(quantize->findData(8));
        QCOMPARE(w.trainConfig().what_if.bits, 8);
    }

    void theWindowDrawsAPresetForItsData() {
        // a table of 3 numeric columns and 2 classes: both front ends draw tabular-mlp as 3 -> ... -> 2
        const QString table = m_dir.filePath(QStringLiteral("t.csv"));
        {
            QFile f(table);
            QVERIFY(f.open(QIODevice::WriteOnly));
            f.write("a,b,c,kind\n");
            for (int i = 0; i < 40; ++i) f.write(QStringLiteral("%1,%2,%3,%4\n").arg(i).arg(i % 7).arg(i * 0.5).arg(i % 2 ? "odd" : "even").toUtf8());
        }
        CliRequest r = parse({"--preset", "tabular-mlp", "--data", "csv:" + table, "--target", "kind"});
        resolveModel(r);
        QCOMPARE(r.config.model.input_shape, (hr::Shape{3}));
        QCOMPARE(r.config.model.num_classes, 2);
        MainWindow w;
        w.setAskBeforeClose(false);
        w.setPersistState(false);
        w.loadPreset(QStringLiteral("tabular-mlp"));
        hr::TrainConfig c = w.trainConfig();
        c.data = "csv:" + table.toStdString();
        c.target.clear();  // the Data panel offers the last column until another is chosen
        w.setTrainConfig(c);
        QCOMPARE(w.dataPanel()->target(), QStringLiteral("kind"));
        QCOMPARE(w.trainConfig().target, std::string("kind"));
        QCOMPARE(w.trainConfig().model, r.config.model);  // the same model as the command line's
        // choosing other data in the panel redraws the unedited preset for it
        auto* data = w.dataPanel()->findChild<QComboBox*>(QStringLiteral("datasetCombo"));
        QVERIFY(data);
        data->setCurrentIndex(data->findData(QStringLiteral("synthetic")));
        QCOMPARE(w.trainConfig().model.input_shape, (hr::Shape{1, 28, 28}));
        QCOMPARE(w.trainConfig().model, hr::preset_model("tabular-mlp", {1, 28, 28}, 10));
        QCOMPARE(w.trainConfig().target, std::string());  // not a table: no target
    }

    // No --preset or --model: the data's preset, with its training settings and the data given
    void withoutAPresetTheDataDecides() {
        const QString table = writeTable(m_dir.filePath(QStringLiteral("decides.csv")));
        QCOMPARE(hr::default_preset_for_data("csv:" + table.toStdString()), std::string("tabular-mlp"));
        QCOMPARE(hr::default_preset_for_data("tsv:x.tsv"), std::string("tabular-mlp"));
        QCOMPARE(hr::default_preset_for_data("text:fortunes"), std::string("gpt-tiny"));
        QCOMPARE(hr::default_preset_for_data("fashion-mnist"), std::string("seed-cnn"));
        QCOMPARE(hr::default_preset_for_data("cifar10"), std::string("seed-cnn"));
        QCOMPARE(hr::default_preset_for_data("synthetic"), std::string("seed-cnn"));
        // a table: tabular-mlp and its training (Adam, batch 32, 30 epochs), the table given
        CliRequest r = parse({"--data", "csv:" + table, "--target", "kind"});
        QCOMPARE(r.preset, std::string("tabular-mlp"));
        QVERIFY(r.presetFromData);
        hr::TrainConfig expected = hr::default_train_config("tabular-mlp");
        expected.data = "csv:" + table.toStdString();
        QCOMPARE(text(training(r.config)), text(training(expected)));
        resolveModel(r);
        QCOMPARE(r.config.model.name, std::string("tabular-mlp"));
        QCOMPARE(r.config.model.input_shape, (hr::Shape{3}));
        QCOMPARE(r.config.model.num_classes, 2);
        QCOMPARE(r.config.model_source, std::string("preset:tabular-mlp"));
        // text: gpt-tiny and its training, the text given; flags still override
        r = parse({"--data", "text:/tmp/some.txt", "--steps", "40"});
        QCOMPARE(r.preset, std::string("gpt-tiny"));
        QCOMPARE(r.config.data, std::string("text:/tmp/some.txt"));
        QCOMPARE(r.config.optimizer.kind, std::string("adamw"));
        QCOMPARE(r.config.batch, hr::default_train_config("gpt-tiny").batch);
        QCOMPARE(r.config.steps, std::int64_t(40));
        QCOMPARE(r.config.eval_every, std::int64_t(10));  // a preset's evaluations follow --steps, as with --preset
        // images and no --data: seed-cnn, the generic settings, as before
        QCOMPARE(parse({"--data", "synthetic"}).preset, std::string("seed-cnn"));
        QCOMPARE(parse({}).preset, std::string("seed-cnn"));
        // a named preset is kept, whatever the data; --model names no preset
        r = parse({"--preset", "mlp", "--data", "csv:" + table, "--target", "kind"});
        QCOMPARE(r.preset, std::string("mlp"));
        QVERIFY(!r.presetFromData);
        QVERIFY(!parse({"--model", "x.json", "--data", "csv:" + table}).presetFromData);
        // plan follows the same rule
        const Subcommand* plan = findSubcommand(QStringLiteral("plan"));
        QVERIFY(plan);
        QCOMPARE(parseCommandLine(*plan, {"--data", "csv:" + table}).preset, std::string("tabular-mlp"));
    }

    // The same, as a person runs it: the table and the text train; a named image preset on a table is
    // refused with its reason, nothing written
    void withoutAPresetTheCommandLineTrainsTheDatasModel() {
        const QString exe = hrtest::qbinary_path("headroom");
        QVERIFY2(QFileInfo::exists(exe), "build the headroom target");
        const QString table = writeTable(m_dir.filePath(QStringLiteral("cli.csv")));
        const QString tableRun = m_dir.filePath(QStringLiteral("table-run"));
        hrtest::ProcessResult p = hrtest::run_program(exe, {"train", "--data", "csv:" + table, "--target", "kind", "--epochs", "2",
                                                            "--device", "cpu", "--threads", "1", "--no-history", "--out", tableRun});
        QVERIFY2(p.exit_code == 0, qPrintable(p.output));
        QVERIFY2(p.output.contains(QStringLiteral("no --preset or --model given: training tabular-mlp, the model for tables")),
                 qPrintable(p.output));
        nlohmann::json run = hrtest::read_json((tableRun + QStringLiteral("/run.json")).toStdString());
        QCOMPARE(run["config"]["model_source"].get<std::string>(), std::string("preset:tabular-mlp"));
        QCOMPARE(run["config"]["model"]["input"].dump(), std::string("[3]"));
        QCOMPARE(run["config"]["model"]["name"].get<std::string>(), std::string("tabular-mlp"));
        QCOMPARE(run["config"]["optimizer"]["kind"].get<std::string>(), std::string("adam"));  // tabular-mlp's training
        QCOMPARE(run["status"].get<std::string>(), std::string("finished"));

        const QString textFile = writeText(m_dir.filePath(QStringLiteral("cli.txt")));
        const QString textRun = m_dir.filePath(QStringLiteral("text-run"));
        p = hrtest::run_program(exe, {"train", "--data", "text:" + textFile, "--steps", "2", "--batch", "2", "--seq", "16",
                                      "--eval-tokens", "256", "--device", "cpu", "--threads", "1", "--no-history", "--out", textRun});
        QVERIFY2(p.exit_code == 0, qPrintable(p.output));
        QVERIFY2(p.output.contains(QStringLiteral("training gpt-tiny, the language model for text")), qPrintable(p.output));
        run = hrtest::read_json((textRun + QStringLiteral("/run.json")).toStdString());
        QCOMPARE(run["config"]["model_source"].get<std::string>(), std::string("preset:gpt-tiny"));
        QCOMPARE(run["config"]["data"].get<std::string>(), "text:" + textFile.toStdString());
        QCOMPARE(run["status"].get<std::string>(), std::string("finished"));

        // a preset named for images on a table: refused with the reason, as before; nothing written
        const QString refused = m_dir.filePath(QStringLiteral("refused-run"));
        p = hrtest::run_program(exe, {"train", "--preset", "seed-cnn", "--data", "csv:" + table, "--target", "kind",
                                      "--device", "cpu", "--no-history", "--out", refused});
        QCOMPARE(p.exit_code, 2);
        QVERIFY2(p.output.contains(QStringLiteral("preset 'seed-cnn' needs image input")) &&
                     p.output.contains(QStringLiteral("tabular-mlp")),
                 qPrintable(p.output));
        QVERIFY(!p.output.contains(QStringLiteral("no --preset")));
        QVERIFY(!QFileInfo::exists(refused));
    }

    // The window follows the same rule until the person chooses a model, and says so in the status bar
    void theWindowsModelFollowsTheDataUntilChosen() {
        const QString table = writeTable(m_dir.filePath(QStringLiteral("window.csv")));
        MainWindow w;
        w.setAskBeforeClose(false);
        w.setPersistState(false);
        QVERIFY(!w.modelChosen());
        QCOMPARE(w.trainConfig().model_source, std::string("preset:seed-cnn"));
        auto* data = w.dataPanel()->findChild<QComboBox*>(QStringLiteral("datasetCombo"));
        auto* path = w.dataPanel()->findChild<QLineEdit*>(QStringLiteral("dataPath"));
        QVERIFY(data && path);
        // the person picks a CSV table and its file
        data->setCurrentIndex(data->findData(QStringLiteral("csv:")));
        path->setText(table);
        emit path->editingFinished();
        hr::TrainConfig c = w.trainConfig();
        QCOMPARE(c.model_source, std::string("preset:tabular-mlp"));
        QCOMPARE(c.data, "csv:" + table.toStdString());
        QCOMPARE(c.target, std::string("kind"));
        QCOMPARE(c.model.input_shape, (hr::Shape{3}));
        QCOMPARE(c.model.num_classes, 2);
        QVERIFY2(w.statusBar()->currentMessage().contains(QStringLiteral("tabular-mlp")), qPrintable(w.statusBar()->currentMessage()));
        QVERIFY(!w.modelChosen());
        // the window's run is the command line's run without --preset
        CliRequest r = parse({"--data", "csv:" + table, "--target", "kind"});
        resolveModel(r);
        QCOMPARE(text(training(c)), text(training(r.config)));
        QCOMPARE(c.model, r.config.model);
        hr::validate_train_config(c);  // Start is not refused
        // text: the language model
        data->setCurrentIndex(data->findData(QStringLiteral("text:fortunes")));
        c = w.trainConfig();
        QCOMPARE(c.model_source, std::string("preset:gpt-tiny"));
        QCOMPARE(c.model, hr::preset_model("gpt-tiny"));
        QCOMPARE(c.data, std::string("text:fortunes"));
        QCOMPARE(c.optimizer.kind, std::string("adamw"));
        QVERIFY(w.statusBar()->currentMessage().contains(QStringLiteral("gpt-tiny")));
        // images again: seed-cnn with the generic settings, the data chosen kept
        data->setCurrentIndex(data->findData(QStringLiteral("synthetic")));
        c = w.trainConfig();
        QCOMPARE(c.model_source, std::string("preset:seed-cnn"));
        QCOMPARE(c.data, std::string("synthetic"));
        QCOMPARE(c.optimizer.kind, std::string("sgd"));
        QCOMPARE(text(training(c)), text(training(parse({"--data", "synthetic"}).config)));

        // a model the person chose is not replaced: mlp stays on a table (and Start refuses it with its reason)
        w.loadPreset(QStringLiteral("mlp"));
        QVERIFY(w.modelChosen());
        data->setCurrentIndex(data->findData(QStringLiteral("csv:")));
        path->setText(table);
        emit path->editingFinished();
        QCOMPARE(w.trainConfig().model_source, std::string("preset:mlp"));
        QCOMPARE(w.trainConfig().model.name, std::string("mlp"));
        data->setCurrentIndex(data->findData(QStringLiteral("text:fortunes")));
        QCOMPARE(w.trainConfig().model_source, std::string("preset:mlp"));
    }

    void presetsListsWhatEachTrainsWith() {
        OutputCapture out;
        QCOMPARE(runCommand({QStringLiteral("presets")}), 0);
        const QString text = out.out();
        for (const std::string& name : allPresets()) QVERIFY2(text.contains(QString::fromStdString(name) + "  "), name.c_str());
        const hr::PresetTraining t = hr::preset_training("gpt-tiny");
        const QString line = text.section(QStringLiteral("gpt-tiny"), 1).section(QStringLiteral("gpt-char"), 0, 0);
        QVERIFY2(line.contains(QStringLiteral("trains with: text:fortunes (byte tokens), adamw lr %1").arg(t.optimizer.lr)), qPrintable(line));
        QVERIFY2(line.contains(QStringLiteral("batch %1, %2 steps").arg(t.batch).arg(t.steps)), qPrintable(line));
        QVERIFY(!text.section(QStringLiteral("seed-cnn"), 1).section(QStringLiteral("mlp"), 0, 0).contains(QStringLiteral("trains with")));
    }

    void newRunFoldersFollowOneRule() {
        // the command line (parent "runs") and the window (parent beside its history) name a new run's
        // folder by one rule: run-YYYYMMDD-HHMMSS, then -2, -3 ... while that folder exists
        QTemporaryDir parent;
        QVERIFY(parent.isValid());
        const QDateTime at(QDate(2026, 12, 3), QTime(7, 42, 5));
        const QString first = hrapp::newRunFolder(parent.path(), at);
        QCOMPARE(first, parent.filePath(QStringLiteral("run-20261203-074205")));
        QVERIFY(!QFileInfo::exists(first));  // named, not made
        QVERIFY(QDir().mkpath(first));
        QCOMPARE(hrapp::newRunFolder(parent.path(), at), first + QStringLiteral("-2"));
        QVERIFY(QDir().mkpath(first + QStringLiteral("-2")));
        QCOMPARE(hrapp::newRunFolder(parent.path(), at), first + QStringLiteral("-3"));
        QCOMPARE(hrapp::newRunFolder(parent.path(), at.addSecs(1)), parent.filePath(QStringLiteral("run-20261203-074206")));
        QCOMPARE(hrapp::newRunFolder(QStringLiteral("runs"), at), QStringLiteral("runs/run-20261203-074205"));
    }
};

QTEST_MAIN(TestPresetDefaults)
#include "test_preset_defaults.moc"
