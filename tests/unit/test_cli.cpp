// The headroom command line as a user runs it: bad input gives one clear message, exit code 2 and
// nothing on disk; a short run writes run.json (predicted and measured memory) and model.safetensors;
// plan predicts and searches; out of memory names the category and prints flags that fit.
#include <QtTest>
#include "test_support.h"

#include <QDir>
#include <QFile>
#include <QJsonDocument>
#include <QJsonObject>
#include <QProcess>
#include <QRegularExpression>
#include <QTemporaryDir>

#include <cmath>
#include <csignal>
#include <cstring>
#include <algorithm>

#include "io/safetensors.h"
#include "nn/compression.h"

class CliTest : public QObject {
    Q_OBJECT

    QString exe() const { return hrtest::qbinary_path("headroom"); }

    struct Result {
        int code;
        QString out, err;
    };
    Result run(const QStringList& args, int timeoutMs = 120000) {
        QProcess p;
        QProcessEnvironment env = QProcessEnvironment::systemEnvironment();
        env.remove(QStringLiteral("DISPLAY"));
        env.remove(QStringLiteral("WAYLAND_DISPLAY"));
        env.remove(QStringLiteral("QT_QPA_PLATFORM"));
        env.insert(QStringLiteral("LANG"), QStringLiteral("C.UTF-8"));
        env.insert(QStringLiteral("LC_ALL"), QStringLiteral("C.UTF-8"));
        p.setProcessEnvironment(env);
        p.start(exe(), args);
        if (!p.waitForFinished(timeoutMs)) {
            p.kill();
            return {-1, {}, QStringLiteral("timed out")};
        }
        return {p.exitCode(), QString::fromUtf8(p.readAllStandardOutput()), QString::fromUtf8(p.readAllStandardError())};
    }

private slots:
    void initTestCase() {
        if (!QFile::exists(exe())) QSKIP("the headroom executable is not built");
    }

    void help() {
        Result r = run({"--help"});
        QCOMPARE(r.code, 0);
        QVERIFY(r.out.contains("headroom train"));
        QVERIFY(r.out.contains("headroom plan"));
        r = run({"train", "--help"});
        QCOMPARE(r.code, 0);
        for (const char* flag : {"--preset", "--model", "--data", "--epochs", "--steps", "--batch", "--optimizer", "--lr",
                                 "--momentum", "--weight-decay", "--seed", "--device", "--threads", "--out", "--precision",
                                 "--checkpoint", "--micro-batch", "--accumulate", "--offload-optimizer"})
            QVERIFY2(r.out.contains(flag), flag);
    }

    void noDisplaySaysHowToRunHeadless() {
        Result r = run({});
        QCOMPARE(r.code, 2);
        QVERIFY(r.err.contains("headroom train"));
    }

    void badInput_data() {
        QTest::addColumn<QStringList>("args");
        QTest::addColumn<QString>("message");
        QTest::newRow("unknown flag") << QStringList{"train", "--bogus"} << "unknown option '--bogus'";
        QTest::newRow("bad number") << QStringList{"train", "--batch", "abc"} << "--batch expects an integer";
        QTest::newRow("missing value") << QStringList{"train", "--lr"} << "--lr needs a value";
        QTest::newRow("unknown preset") << QStringList{"train", "--preset", "vgg"} << "unknown preset 'vgg'";
        QTest::newRow("missing data") << QStringList{"train", "--data", "idx:/nonexistent"} << "idx:/nonexistent";
        QTest::newRow("unknown dataset") << QStringList{"train", "--data", "imagenet"} << "imagenet";
        QTest::newRow("bad optimizer") << QStringList{"train", "--optimizer", "lion"} << "unknown optimizer 'lion'";
        QTest::newRow("bad precision") << QStringList{"train", "--precision", "int4"} << "unknown precision 'int4'";
        QTest::newRow("bad accumulate") << QStringList{"train", "--accumulate", "5"} << "not divisible";
        QTest::newRow("unwritable out") << QStringList{"train", "--out", "/proc/headroom-test"} << "not a writable folder";
        QTest::newRow("cuda without backend") << QStringList{"train", "--device", "cuda:7"} << "cuda:7";
        QTest::newRow("plan bad budget") << QStringList{"plan", "--budget", "lots"} << "cannot read the size 'lots'";
        QTest::newRow("plan train-only flag") << QStringList{"plan", "--epochs", "3"} << "unknown option '--epochs'";
        QTest::newRow("epochs past 32 bits") << QStringList{"train", "--epochs", "4294967297"} << "--epochs expects an integer from 1 to 100000";
        QTest::newRow("epochs and steps") << QStringList{"train", "--epochs=3", "--steps", "5"} << "give either --epochs or --steps, not both";
        QTest::newRow("size too large") << QStringList{"train", "--memory-limit", "1e30"} << "larger than 1 EiB";
        QTest::newRow("bad webhook") << QStringList{"train", "--notify", "nowhere"} << "--notify: 'nowhere' is not a webhook";
        QTest::newRow("bad chat template") << QStringList{"train", "--chat-template", "jinja"} << "'jinja'";
        QTest::newRow("bad sequences") << QStringList{"train", "--sequences", "stack"} << "'stack'";
        QTest::newRow("lora dropout 1.5") << QStringList{"train", "--lora", "4", "--lora-dropout", "1.5"}
                                          << "--lora-dropout expects a number in [0, 1), got '1.5'";
        QTest::newRow("lora dropout negative") << QStringList{"train", "--lora", "4", "--lora-dropout", "-0.1"}
                                               << "--lora-dropout expects a number in [0, 1), got '-0.1'";
        QTest::newRow("lora dropout abc") << QStringList{"train", "--lora", "4", "--lora-dropout", "abc"}
                                          << "--lora-dropout expects a number in [0, 1), got 'abc'";
        QTest::newRow("lora dropout without lora") << QStringList{"train", "--lora-dropout", "0.1"}
                                                   << "--lora-dropout drops the input of LoRA's adapters: it needs --lora R";
        QTest::newRow("no tokenizer file") << QStringList{"train", "--tokenizer", "/nonexistent/tokenizer.json"}
                                           << "unknown tokenizer '/nonexistent/tokenizer.json'";
    }
    void badInput() {
        QFETCH(QStringList, args);
        QFETCH(QString, message);
        QTemporaryDir dir;
        QStringList a = args;  // extra flags go first, so a flag missing its value stays last
        if (a[0] == "train") {
            QStringList extra{"--no-history"};
            if (!a.contains("--out")) extra << "--out" << dir.path() + "/run";
            for (qsizetype i = extra.size(); i-- > 0;) a.insert(1, extra[i]);
        }
        Result r = run(a);
        QCOMPARE(r.code, 2);
        QVERIFY2(r.err.contains(message), qPrintable(r.err));
        QCOMPARE(r.err.count('\n'), 1);  // one message
        QVERIFY(!QFile::exists(dir.path() + "/run"));
    }

    // Instruction rows (issue 46): a run says the template and layout it used in run.json; a malformed row is
    // one message naming its line, exit code 2, nothing written.
    void instructionRows() {
        QTemporaryDir dir;
        const QString rows = dir.path() + "/rows.jsonl";
        {
            QFile f(rows);
            QVERIFY(f.open(QIODevice::WriteOnly));
            for (int i = 0; i < 30; ++i)
                f.write(QStringLiteral("{\"messages\": [{\"role\": \"user\", \"content\": \"say %1\"}, "
                                       "{\"role\": \"assistant\", \"content\": \"%1 %1\"}]}\n").arg(i).toUtf8());
        }
        Result r = run({"train", "--preset", "gpt-tiny", "--data", "jsonl:" + rows, "--chat-template", "chatml",
                        "--sequences", "pack", "--steps", "3", "--batch", "2", "--seq", "32", "--threads", "1",
                        "--no-history", "--out", dir.path() + "/run"});
        QVERIFY2(r.code == 0, qPrintable(r.err));
        QFile f(dir.path() + "/run/run.json");
        QVERIFY(f.open(QIODevice::ReadOnly));
        const QJsonObject j = QJsonDocument::fromJson(f.readAll()).object();
        QCOMPARE(j["config"].toObject()["chat_template"].toString(), QStringLiteral("chatml"));
        QCOMPARE(j["data"].toObject()["chat_template"].toString(), QStringLiteral("chatml"));
        QCOMPARE(j["data"].toObject()["sequences"].toString(), QStringLiteral("pack"));
        QVERIFY(j["data"].toObject()["trained_tokens"].toInteger() > 0);
        QFile bad(dir.path() + "/bad.jsonl");
        QVERIFY(bad.open(QIODevice::WriteOnly));
        bad.write("{\"prompt\": \"a\", \"completion\": \"b\"}\n{\"prompt\": \"a\"}\n");
        bad.close();
        r = run({"train", "--preset", "gpt-tiny", "--data", "jsonl:" + bad.fileName(), "--steps", "3", "--no-history",
                 "--out", dir.path() + "/bad"});
        QCOMPARE(r.code, 2);
        QVERIFY2(r.err.contains("line 2 of") && r.err.contains("\"completion\" is missing"), qPrintable(r.err));
        QCOMPARE(r.err.count('\n'), 1);
        QVERIFY(!QFile::exists(dir.path() + "/bad"));

        // issue 57: ShareGPT rows as one .json array, the layout named in the log; a bad element named by its
        // index and line, nothing written
        const QString share = dir.path() + "/share.json";
        {
            QFile s(share);
            QVERIFY(s.open(QIODevice::WriteOnly));
            s.write("[\n");
            for (int i = 0; i < 12; ++i)
                s.write(QStringLiteral("%1{\"conversations\": [{\"from\": \"human\", \"value\": \"say %2\"}, "
                                       "{\"from\": \"gpt\", \"value\": \"%2 %2\"}]}\n")
                            .arg(i ? QStringLiteral(",") : QString())
                            .arg(i)
                            .toUtf8());
            s.write("]\n");
        }
        r = run({"train", "--preset", "gpt-tiny", "--data", "jsonl:" + share, "--steps", "2", "--batch", "2",
                 "--seq", "32", "--threads", "1", "--no-history", "--out", dir.path() + "/share"});
        QVERIFY2(r.code == 0, qPrintable(r.err));
        QVERIFY2((r.out + r.err).contains(share + ": a JSON array of rows in the ShareGPT layout (detected from the first row)"),
                 qPrintable(r.out + r.err));
        QFile badShare(dir.path() + "/bad.json");
        QVERIFY(badShare.open(QIODevice::WriteOnly));
        badShare.write("[\n{\"conversations\": [{\"from\": \"human\", \"value\": \"a\"}, {\"from\": \"gpt\", \"value\": \"b\"}]},\n"
                       "{\"conversations\": [{\"from\": \"bot\", \"value\": \"a\"}]}\n]\n");
        badShare.close();
        r = run({"train", "--preset", "gpt-tiny", "--data", "jsonl:" + badShare.fileName(), "--steps", "2", "--no-history",
                 "--out", dir.path() + "/bad2"});
        QCOMPARE(r.code, 2);
        QVERIFY2(r.err.contains("element 2 (line 3) of") && r.err.contains("'bot' is not system, human or gpt"), qPrintable(r.err));
        QVERIFY(!QFile::exists(dir.path() + "/bad2"));
    }

    void modelSpecErrorNamesTheLayer() {
        QTemporaryDir dir;
        QFile f(dir.path() + "/bad.json");
        QVERIFY(f.open(QIODevice::WriteOnly));
        f.write(R"({"input":[1,28,28],"layers":[{"type":"conv2d","in_channels":1,"out_channels":4,"kernel_size":3},
                    {"type":"linear","in_features":10,"out_features":10}]})");
        f.close();
        Result r = run({"train", "--model", f.fileName(), "--no-history", "--out", dir.path() + "/run"});
        QCOMPARE(r.code, 2);
        QVERIFY2(r.err.contains("layer 1 (linear)") && r.err.contains("insert a Flatten"), qPrintable(r.err));
        QVERIFY(!QFile::exists(dir.path() + "/run"));
    }

    void shortRunWritesRecordAndWeights() {
        QTemporaryDir dir;
        Result r = run({"train", "--data", "synthetic", "--steps", "20", "--batch", "32", "--precision", "bf16",
                        "--checkpoint", "all", "--accumulate", "2", "--no-history", "--out", dir.path() + "/run"});
        QVERIFY2(r.code == 0, qPrintable(r.err));
        QVERIFY(r.out.trimmed().split('\n').last().startsWith("test_accuracy=0."));
        QVERIFY(QFile::exists(dir.path() + "/run/model.safetensors"));
        QFile f(dir.path() + "/run/run.json");
        QVERIFY(f.open(QIODevice::ReadOnly));
        QJsonObject j = QJsonDocument::fromJson(f.readAll()).object();
        QCOMPARE(j["status"].toString(), QStringLiteral("finished"));
        QCOMPARE(j["final"].toObject()["steps"].toInt(), 20);
        QJsonObject measured = j["memory"].toObject()["measured"].toObject()["peak"].toObject();
        QJsonObject predicted = j["memory"].toObject()["predicted"].toObject()["device"].toObject();
        QVERIFY(!predicted.isEmpty());
        for (const QString& cat : measured.keys())
            QCOMPARE(predicted[cat].toDouble(), measured[cat].toDouble());
        QVERIFY(measured["master_weights"].toDouble() > 0);
        // nothing else in the folder (no temporary files left behind): config.json and the checkpoint
        // at the end (train/resume.h) besides the outputs
        QCOMPARE(QDir(dir.path() + "/run").entryList(QDir::Files),
                 (QStringList{"checkpoint-000000020.json", "checkpoint-000000020.safetensors", "config.json",
                              "model.safetensors", "run.json"}));
    }

    // LoRA from the command line: a trained base (--init-from) fine-tuned with rank-4 adapters; run.json says the
    // accuracy before (the base's own, as its run measured it on the same test split) and after, the memory
    // the planner predicted is the ledger's, the weights file keeps the base as it was and adds the adapters;
    // resuming continues the adapters; a model with no linear layer to adapt is refused in one sentence.
    void loraFineTunesATrainedModel() {
        QTemporaryDir dir;
        const QStringList common{"--data", "synthetic", "--train-limit", "512", "--test-limit", "128", "--batch", "32",
                                 "--preset", "mlp", "--threads", "1", "--no-history"};
        Result r = run(QStringList{"train", "--steps", "10", "--out", dir.path() + "/base"} + common);
        QVERIFY2(r.code == 0, qPrintable(r.err));
        r = run(QStringList{"train", "--steps", "10", "--lora", "4", "--lora-alpha", "8", "--init-from",
                            dir.path() + "/base/model.safetensors", "--quantize", "int8", "--out", dir.path() + "/lora"} +
                common);
        QVERIFY2(r.code == 0, qPrintable(r.err));
        auto read = [&](const QString& path) {
            QFile f(path);
            return f.open(QIODevice::ReadOnly) ? QJsonDocument::fromJson(f.readAll()).object() : QJsonObject();
        };
        const QJsonObject base = read(dir.path() + "/base/run.json"), j = read(dir.path() + "/lora/run.json");
        const QJsonObject lora = j["final"].toObject()["lora"].toObject();
        QCOMPARE(lora["rank"].toInt(), 4);
        QCOMPARE(lora["alpha"].toDouble(), 8.0);
        QCOMPARE(lora["frozen_params"].toInteger(), base["final"].toObject()["param_count"].toInteger());
        QCOMPARE(lora["test_accuracy_before"].toDouble(), base["final"].toObject()["test_accuracy"].toDouble());
        QCOMPARE(lora["test_accuracy_after"].toDouble(), j["final"].toObject()["test_accuracy"].toDouble());
        // the what-if after training reads the weights file into a model without adapters: merged (W + s B A),
        // it computes the adapted model's function (the same accuracy, the loss to float rounding)
        const QJsonObject what = j["final"].toObject()["compression"].toObject();
        QCOMPARE(what["test_accuracy_before"].toDouble(), lora["test_accuracy_after"].toDouble());
        QVERIFY(std::abs(what["test_loss_before"].toDouble() / lora["test_loss_after"].toDouble() - 1) < 1e-5);
        QJsonObject measured = j["memory"].toObject()["measured"].toObject()["peak"].toObject();
        QJsonObject predicted = j["memory"].toObject()["predicted"].toObject()["device"].toObject();
        for (const QString& cat : measured.keys()) QCOMPARE(predicted[cat].toDouble(), measured[cat].toDouble());
        QVERIFY(measured["gradients"].toDouble() * 20 < measured["parameters"].toDouble());
        // the weights file: the base unchanged, plus the adapters
        const hr::SafeTensorsFile b = hr::read_safetensors((dir.path() + "/base/model.safetensors").toStdString());
        const hr::SafeTensorsFile l = hr::read_safetensors((dir.path() + "/lora/model.safetensors").toStdString());
        QCOMPARE(l.tensors.size(), b.tensors.size() + 6);
        for (const hr::SafeTensor& t : b.tensors) {
            const hr::SafeTensor* u = l.find(t.name);
            QVERIFY2(u && u->data == t.data, t.name.c_str());
        }
        // resumed: the adapters go on from the checkpoint (the same configuration)
        r = run({"train", "--resume", dir.path() + "/lora", "--steps", "12", "--no-history"});
        QVERIFY2(r.code == 0, qPrintable(r.err));
        QCOMPARE(read(dir.path() + "/lora/run.json")["final"].toObject()["steps"].toInt(), 12);
        // nothing to adapt: a model of convolutions only
        {
            QFile spec(dir.path() + "/conv.json");
            QVERIFY(spec.open(QIODevice::WriteOnly));
            spec.write(R"({"format":"headroom-model","version":1,"name":"conv-only","input":[1,28,28],"num_classes":10,
                "loss":{"type":"cross_entropy","label_smoothing":0.0},
                "layers":[{"type":"conv2d","in_channels":1,"out_channels":10,"kernel_size":28},{"type":"flatten"}]})");
        }
        r = run({"train", "--model", dir.path() + "/conv.json", "--data", "synthetic", "--steps", "1", "--lora", "4",
                 "--no-history", "--out", dir.path() + "/conv"});
        QCOMPARE(r.code, 2);
        QVERIFY2(r.err.contains("--lora 4 adds adapters to linear layers and transformer projections, but this model "
                                "has neither"),
                 qPrintable(r.err));
        QVERIFY(!QDir(dir.path() + "/conv").exists());
    }

    // LoRA on a GPT (gpt-tiny: tied head, two blocks): adapters on each block's four projections, everything
    // else frozen, the tied embedding included. The validation loss before the first step is the base run's
    // own; the planner predicts the ledger; the base leaves the weights file unchanged, the adapters moved.
    void loraFineTunesAGpt() {
        QTemporaryDir dir;
        const QStringList common{"--preset", "gpt-tiny", "--data", "text:fortunes", "--batch", "4", "--eval-tokens",
                                 "4096", "--threads", "1", "--no-history", "--lr", "0.003", "--warmup", "0"};
        Result r = run(QStringList{"train", "--steps", "6", "--out", dir.path() + "/base"} + common);
        QVERIFY2(r.code == 0, qPrintable(r.err));
        r = run(QStringList{"train", "--steps", "6", "--lora", "4", "--init-from", dir.path() + "/base/model.safetensors",
                            "--out", dir.path() + "/lora"} +
                common);
        QVERIFY2(r.code == 0, qPrintable(r.err));
        auto read = [&](const QString& path) {
            QFile f(path);
            return f.open(QIODevice::ReadOnly) ? QJsonDocument::fromJson(f.readAll()).object() : QJsonObject();
        };
        const QJsonObject base = read(dir.path() + "/base/run.json"), j = read(dir.path() + "/lora/run.json");
        const QJsonObject lora = j["final"].toObject()["lora"].toObject();
        const qint64 C = 128, F = 512, R = 4;
        QCOMPARE(lora["adapter_params"].toInteger(), 2 * R * ((C + 3 * C) + (C + C) + (C + F) + (F + C)));
        QCOMPARE(lora["frozen_params"].toInteger(), base["final"].toObject()["param_count"].toInteger());
        QCOMPARE(lora["test_loss_before"].toDouble(), base["final"].toObject()["test_loss"].toDouble());
        QVERIFY(lora["test_loss_after"].toDouble() != lora["test_loss_before"].toDouble());
        const QJsonObject measured = j["memory"].toObject()["measured"].toObject()["peak"].toObject();
        const QJsonObject predicted = j["memory"].toObject()["predicted"].toObject()["device"].toObject();
        for (const QString& cat : measured.keys()) QCOMPARE(predicted[cat].toDouble(), measured[cat].toDouble());
        QVERIFY(measured["gradients"].toDouble() * 10 < measured["parameters"].toDouble());
        // the frozen embedding takes no gradient: the workspace holds no (vocabulary, width) scratch for it
        QVERIFY(measured["workspace"].toDouble() <
                read(dir.path() + "/base/run.json")["memory"].toObject()["measured"].toObject()["peak"].toObject()["workspace"].toDouble() +
                    1024 * 1024);
        const hr::SafeTensorsFile b = hr::read_safetensors((dir.path() + "/base/model.safetensors").toStdString());
        const hr::SafeTensorsFile l = hr::read_safetensors((dir.path() + "/lora/model.safetensors").toStdString());
        QCOMPARE(l.tensors.size(), b.tensors.size() + 2 * 4 * 2);
        for (const hr::SafeTensor& t : b.tensors) {
            const hr::SafeTensor* u = l.find(t.name);
            QVERIFY2(u && u->data == t.data, t.name.c_str());
        }
        const hr::SafeTensor* bfc = l.find("transformer.h.1.mlp.c_fc.lora_B");
        QVERIFY(bfc && bfc->shape == hr::Shape({F, R}));
        bool moved = false;
        for (std::size_t i = 0; i < bfc->data.size() / 4; ++i) moved = moved || reinterpret_cast<const float*>(bfc->data.data())[i] != 0;
        QVERIFY(moved);
    }

    // --lora-dropout (peft's lora_dropout) on a LLaMA model from a Hugging Face folder: config.json, run.json
    // (strategy and final.lora) and peft's adapter_config.json carry it; the planner predicts the ledger with it
    // on (the dropped input and its mask in the workspace); the adapters train otherwise than without it; a run
    // --init-from the adapter folder trains on with the adapter's lora_dropout, or the flag's when given.
    void loraDropoutRoundTripsThroughPeft() {
        QTemporaryDir dir;
        const QString d = dir.path();
        const QStringList common{"--data", "text:fortunes", "--batch", "2", "--seq", "32", "--eval-tokens", "256",
                                 "--threads", "1", "--no-history", "--lr", "0.01", "--warmup", "0"};
        Result r = run(QStringList{"train", "--preset", "llama-tiny", "--steps", "1", "--out", d + "/base"} + common);
        QVERIFY2(r.code == 0, qPrintable(r.err));
        r = run({"export", d + "/base", "--hf", d + "/hf"});
        QVERIFY2(r.code == 0, qPrintable(r.err));
        auto read = [&](const QString& path) {
            QFile f(path);
            return f.open(QIODevice::ReadOnly) ? QJsonDocument::fromJson(f.readAll()).object() : QJsonObject();
        };
        const QStringList lora{"--init-from", d + "/hf", "--lora", "4", "--steps", "3"};
        r = run(QStringList{"train", "--lora-dropout", "0.25", "--out", d + "/drop"} + lora + common);
        QVERIFY2(r.code == 0, qPrintable(r.err));
        r = run(QStringList{"train", "--out", d + "/plain"} + lora + common);
        QVERIFY2(r.code == 0, qPrintable(r.err));
        const QJsonObject j = read(d + "/drop/run.json");
        QCOMPARE(j["config"].toObject()["strategy"].toObject()["lora_dropout"].toDouble(), 0.25);
        QCOMPARE(j["final"].toObject()["lora"].toObject()["dropout"].toDouble(), 0.25);
        QCOMPARE(read(d + "/drop/config.json")["strategy"].toObject()["lora_dropout"].toDouble(), 0.25);
        QCOMPARE(read(d + "/drop/adapter_config.json")["lora_dropout"].toDouble(), 0.25);
        QCOMPARE(read(d + "/plain/adapter_config.json")["lora_dropout"].toDouble(), 0.0);
        const QJsonObject measured = j["memory"].toObject()["measured"].toObject()["peak"].toObject();
        const QJsonObject predicted = j["memory"].toObject()["predicted"].toObject()["device"].toObject();
        for (const QString& cat : measured.keys()) QCOMPARE(predicted[cat].toDouble(), measured[cat].toDouble());
        // the workspace holds the widest adapted input (q_proj's and v_proj's: 128 wide) dropped, and its mask
        const double plainWs = read(d + "/plain/run.json")["memory"].toObject()["measured"].toObject()["peak"].toObject()["workspace"].toDouble();
        QVERIFY2(measured["workspace"].toDouble() >= plainWs + 2 * 32 * 128 * (4 + 1),
                 qPrintable(QStringLiteral("%1 vs %2").arg(measured["workspace"].toDouble()).arg(plainWs)));
        const hr::SafeTensorsFile a = hr::read_safetensors((d + "/drop/adapter_model.safetensors").toStdString());
        const hr::SafeTensorsFile b = hr::read_safetensors((d + "/plain/adapter_model.safetensors").toStdString());
        QCOMPARE(a.tensors.size(), b.tensors.size());
        bool differ = false;
        for (const hr::SafeTensor& t : a.tensors) differ = differ || b.find(t.name)->data != t.data;
        QVERIFY(differ);
        // from the run folder itself (its config.json is Headroom's, its adapter files peft's) and from the adapter
        // files alone in a folder: the adapter's lora_dropout, unless the flag says otherwise
        QVERIFY(QDir().mkpath(d + "/adapter"));
        for (const char* f : {"/adapter_config.json", "/adapter_model.safetensors"})
            QVERIFY(QFile::copy(d + "/drop" + f, d + "/adapter" + f));
        r = run(QStringList{"train", "--init-from", d + "/drop", "--lora", "4", "--steps", "1", "--out", d + "/on"} + common);
        QVERIFY2(r.code == 0, qPrintable(r.err));
        QCOMPARE(read(d + "/on/run.json")["config"].toObject()["strategy"].toObject()["lora_dropout"].toDouble(), 0.25);
        QCOMPARE(read(d + "/on/adapter_config.json")["base_model_name_or_path"], read(d + "/drop/adapter_config.json")["base_model_name_or_path"]);
        // a run folder without adapters: the weights it wrote
        r = run(QStringList{"train", "--preset", "llama-tiny", "--init-from", d + "/base", "--steps", "1", "--out", d + "/cont"} + common);
        QVERIFY2(r.code == 0, qPrintable(r.err));
        QVERIFY(read(d + "/cont/run.json")["config"].toObject()["init_from"].toString().endsWith(QLatin1String("/base/model.safetensors")));
        const QStringList again{"--init-from", d + "/adapter", "--lora", "4", "--steps", "1"};
        r = run(QStringList{"train", "--lora-dropout", "0", "--out", d + "/off"} + again + common);
        QVERIFY2(r.code == 0, qPrintable(r.err));
        QCOMPARE(read(d + "/off/run.json")["config"].toObject()["strategy"].toObject()["lora_dropout"].toDouble(), 0.0);
    }

    // QLoRA (--quantize-base): the adapters train on the base's projections stored int8 / int4. Against an
    // independent route: the base file's projections fake-quantised here (absmax, round half to even, q x s in
    // f32, as bitsandbytes and torch compute it) and plain LoRA on that file. Same data, same steps: the
    // weights files must be bit-identical. The planner predicts the ledger; the parameters shrink by what the
    // packed storage saves, the workspace grows by one dequantised projection; a resumed run goes on exactly.
    void qloraEqualsLoraOnTheQuantisedBase_data() {
        QTest::addColumn<int>("bits");
        QTest::newRow("int8") << 8;
        QTest::newRow("int4") << 4;
        QTest::newRow("nf4") << hr::kQuantNf4;
    }
    void qloraEqualsLoraOnTheQuantisedBase() {
        QFETCH(int, bits);
        const QString q = QString::fromLatin1(hr::quantize_name(bits));
        QTemporaryDir dir;
        const QStringList common{"--preset", "gpt-tiny", "--data", "text:fortunes", "--batch", "4", "--eval-tokens",
                                 "4096", "--threads", "1", "--no-history", "--lr", "0.003", "--warmup", "0"};
        Result r = run(QStringList{"train", "--steps", "4", "--out", dir.path() + "/base"} + common);
        QVERIFY2(r.code == 0, qPrintable(r.err));
        // the reference base: each adapted projection's weight replaced by its quantised values
        hr::SafeTensorsFile fq = hr::read_safetensors((dir.path() + "/base/model.safetensors").toStdString());
        std::int64_t quantised = 0;
        double saved = 0;  // bytes: f32 against the packed storage (scales + codes)
        for (hr::SafeTensor& t : fq.tensors) {
            const std::string& n = t.name;
            bool proj = false;
            for (const char* suffix : {".attn.c_attn.weight", ".attn.c_proj.weight", ".mlp.c_fc.weight", ".mlp.c_proj.weight"})
                proj = proj || (n.size() > std::strlen(suffix) && n.compare(n.size() - std::strlen(suffix), std::string::npos, suffix) == 0);
            if (!proj) continue;
            QCOMPARE(t.dtype, hr::DType::f32);
            const std::int64_t rows = t.shape[0], cols = t.shape[1], g = bits == 8 ? cols : 64;
            const float qmax = bits == 8 ? 127.0f : 7.0f;
            auto* w = reinterpret_cast<float*>(t.data.data());
            if (bits == hr::kQuantNf4) {  // NF4: the library's quantiser, checked against PyTorch in unit/backend_ops
                hr::quantize_rows(w, rows, cols, bits, 64);
                quantised += rows * cols;
                saved += 4.0 * rows * cols - static_cast<double>(hr::quantized_bytes(rows, cols, bits, 64));
                continue;
            }
            std::int64_t scales = 0;
            for (std::int64_t i = 0; i < rows; ++i)
                for (std::int64_t c0 = 0; c0 < cols; c0 += g, ++scales) {
                    float amax = 0;
                    for (std::int64_t c = c0; c < std::min(cols, c0 + g); ++c) amax = std::max(amax, std::fabs(w[i * cols + c]));
                    const float s = amax / qmax;
                    for (std::int64_t c = c0; c < std::min(cols, c0 + g); ++c) {
                        float& v = w[i * cols + c];
                        v = s == 0 ? 0.0f : std::clamp(std::nearbyint(v / s), -qmax, qmax) * s;
                    }
                }
            quantised += rows * cols;
            saved += 4.0 * rows * cols - (4.0 * scales + std::ceil(rows * cols * bits / 8.0));
        }
        hr::write_safetensors((dir.path() + "/fq.safetensors").toStdString(), fq);
        const QStringList lora = common + QStringList{"--lora", "4", "--schedule", "constant"};
        r = run(QStringList{"train", "--steps", "4", "--quantize-base", q, "--init-from", dir.path() + "/base/model.safetensors",
                            "--out", dir.path() + "/qlora"} + lora);
        QVERIFY2(r.code == 0, qPrintable(r.err));
        r = run(QStringList{"train", "--steps", "4", "--init-from", dir.path() + "/fq.safetensors", "--out", dir.path() + "/ref"} + lora);
        QVERIFY2(r.code == 0, qPrintable(r.err));
        const hr::SafeTensorsFile a = hr::read_safetensors((dir.path() + "/qlora/model.safetensors").toStdString());
        const hr::SafeTensorsFile b = hr::read_safetensors((dir.path() + "/ref/model.safetensors").toStdString());
        QCOMPARE(a.tensors.size(), b.tensors.size());
        for (const hr::SafeTensor& t : b.tensors) {  // the adapters, and the base as the run computed with it (f32)
            const hr::SafeTensor* u = a.find(t.name);
            QVERIFY2(u && u->dtype == t.dtype && u->shape == t.shape && u->data.size() == t.data.size(), t.name.c_str());
            // equal values (a value quantised to -0 is stored as code 0: +0, which is the same number)
            const float* x = reinterpret_cast<const float*>(u->data.data());
            const float* y = reinterpret_cast<const float*>(t.data.data());
            QVERIFY2(std::equal(x, x + u->data.size() / 4, y), t.name.c_str());
        }
        auto read = [&](const QString& path) {
            QFile f(path);
            return f.open(QIODevice::ReadOnly) ? QJsonDocument::fromJson(f.readAll()).object() : QJsonObject();
        };
        const QJsonObject jq = read(dir.path() + "/qlora/run.json"), jr = read(dir.path() + "/ref/run.json");
        const QJsonObject lq = jq["final"].toObject()["lora"].toObject();
        QCOMPARE(lq["base"].toString(), q);
        QCOMPARE(lq["quantized_params"].toInteger(), quantised);
        QCOMPARE(lq["test_loss_before"].toDouble(), jr["final"].toObject()["lora"].toObject()["test_loss_before"].toDouble());
        QVERIFY(lq["test_loss_before"].toDouble() !=
                read(dir.path() + "/base/run.json")["final"].toObject()["test_loss"].toDouble());  // quantising costs
        const QJsonObject mq = jq["memory"].toObject()["measured"].toObject()["peak"].toObject();
        const QJsonObject pq = jq["memory"].toObject()["predicted"].toObject()["device"].toObject();
        for (const QString& cat : mq.keys()) QCOMPARE(pq[cat].toDouble(), mq[cat].toDouble());
        const QJsonObject mr = jr["memory"].toObject()["measured"].toObject()["peak"].toObject();
        const double less = mr["parameters"].toDouble() - mq["parameters"].toDouble();
        QVERIFY2(std::abs(less - saved) <= 8 * 256, qPrintable(QString("%1 vs %2").arg(less).arg(saved)));
        QCOMPARE(mq["workspace"].toDouble() - mr["workspace"].toDouble(), 512.0 * 128 * 4);  // c_fc's (F, C), dequantised
        // resumed from a checkpoint of the packed base: the same as one run
        r = run(QStringList{"train", "--steps", "2", "--quantize-base", q, "--init-from", dir.path() + "/base/model.safetensors",
                            "--out", dir.path() + "/half"} + lora);
        QVERIFY2(r.code == 0, qPrintable(r.err));
        r = run({"train", "--resume", dir.path() + "/half", "--steps", "4", "--no-history"});
        QVERIFY2(r.code == 0, qPrintable(r.err));
        const hr::SafeTensorsFile h = hr::read_safetensors((dir.path() + "/half/model.safetensors").toStdString());
        for (const hr::SafeTensor& t : a.tensors) {
            const hr::SafeTensor* u = h.find(t.name);
            QVERIFY2(u && u->data == t.data, t.name.c_str());
        }
        // without --lora there is nothing to quantise the base for
        r = run(QStringList{"train", "--steps", "1", "--quantize-base", q, "--out", dir.path() + "/none"} + common);
        QCOMPARE(r.code, 2);
        QVERIFY2(r.err.contains("add --lora R"), qPrintable(r.err));
        QVERIFY(!QDir(dir.path() + "/none").exists());
    }

    void firstLineSaysWhichDeviceAndWhy() {
        QTemporaryDir dir;
        Result r = run({"train", "--data", "synthetic", "--steps", "2", "--no-history", "--out", dir.path() + "/a"});
        QVERIFY2(r.code == 0, qPrintable(r.err));
        const QString first = r.out.split('\n').first();
        // --device auto is the default: the line says what auto chose and why
        QVERIFY2(first.startsWith("device: ") && first.contains("device auto: "), qPrintable(first));
        r = run({"train", "--data", "synthetic", "--steps", "2", "--no-history", "--device", "cpu", "--out", dir.path() + "/b"});
        QVERIFY2(r.code == 0, qPrintable(r.err));
        QVERIFY2(r.out.startsWith("device: cpu (") && r.out.split('\n').first().endsWith("(--device cpu)"), qPrintable(r.out));
        // the defaults are the window's: SGD with momentum 0.9 on the automatic device
        QFile f(dir.path() + "/a/run.json");
        QVERIFY(f.open(QIODevice::ReadOnly));
        const QJsonObject config = QJsonDocument::fromJson(f.readAll()).object()["config"].toObject();
        QCOMPARE(config["optimizer"].toObject()["momentum"].toDouble(), 0.9);
        QCOMPARE(config["device"].toString(), QStringLiteral("auto"));
    }

    void interruptStopsAfterTheStepAndWrites() {
        QTemporaryDir dir;
        QProcess p;
        p.start(exe(), {"train", "--data", "synthetic", "--epochs", "50", "--batch", "32", "--threads", "1", "--no-history",
                        "--out", dir.path() + "/run"});
        QVERIFY(p.waitForStarted(10000));
        QByteArray out;
        QVERIFY(QTest::qWaitFor([&] {
            out += p.readAllStandardOutput();
            return out.contains("device: ");
        }, 60000));
        QTest::qWait(1500);  // a few steps
        QCOMPARE(::kill(static_cast<pid_t>(p.processId()), SIGINT), 0);
        QVERIFY(p.waitForFinished(60000));
        QCOMPARE(p.exitStatus(), QProcess::NormalExit);  // stopped by itself, not killed by the signal
        QCOMPARE(p.exitCode(), 1);
        const QString err = QString::fromUtf8(p.readAllStandardError());
        QVERIFY2(err.contains("stopped after"), qPrintable(err));
        QFile f(dir.path() + "/run/run.json");
        QVERIFY(f.open(QIODevice::ReadOnly));
        const QJsonObject record = QJsonDocument::fromJson(f.readAll()).object();
        QCOMPARE(record["status"].toString(), QStringLiteral("stopped"));
        QVERIFY(record["final"].toObject()["steps"].toInt() > 0);
        // the outputs, config.json and the stopped step's checkpoint (.json and .safetensors), nothing hidden
        QCOMPARE(QDir(dir.path() + "/run").entryList(QDir::Files | QDir::Hidden).size(), 5);
        QCOMPARE(QDir(dir.path() + "/run").entryList({"checkpoint-*"}, QDir::Files).size(), 2);
    }

    void outOfMemoryPrintsFlagsThatFit() {
        QTemporaryDir dir;
        Result r = run({"train", "--data", "synthetic", "--steps", "5", "--memory-limit", "3MiB", "--no-history",
                        "--out", dir.path() + "/run"});
        QCOMPARE(r.code, 2);
        QVERIFY2(r.err.contains("out of memory") && r.err.contains("activations"), qPrintable(r.err));
        QVERIFY2(r.err.contains("this fits in 3.00 MiB"), qPrintable(r.err));
        QVERIFY(!QFile::exists(dir.path() + "/run"));
        // and the suggested flags do fit
        QString line = r.err.split('\n').filter("this fits in").first();
        QStringList flags = line.mid(line.indexOf("--batch")).split(' ', Qt::SkipEmptyParts);
        Result ok = run(QStringList{"train", "--data", "synthetic", "--steps", "5", "--memory-limit", "3MiB",
                                    "--no-history", "--out", dir.path() + "/run2"} + flags);
        QVERIFY2(ok.code == 0, qPrintable(ok.err));
    }

    // A run larger than the machine's free RAM is refused at setup (every buffer is allocated before the
    // first step), against the host memory the kernel reports available, with one out-of-memory account:
    // not killed by the kernel mid-run, and nothing on disk.
    void runLargerThanFreeRamIsRefusedAtSetup() {
        QFile meminfo(QStringLiteral("/proc/meminfo"));
        QVERIFY(meminfo.open(QIODevice::ReadOnly));
        double available_gib = 0;
        for (const QByteArray& line : meminfo.readAll().split('\n'))
            if (line.startsWith("MemAvailable:")) available_gib = line.mid(13).trimmed().split(' ').first().toDouble() / (1024.0 * 1024.0);
        QVERIFY(available_gib > 0);
        QTemporaryDir dir;
        Result r = run({"train", "--data", "synthetic", "--batch", "16777216", "--steps", "1", "--no-history",
                        "--out", dir.path() + "/run"});
        QCOMPARE(r.code, 2);
        QCOMPARE(r.err.count(QStringLiteral("could not allocate")), 1);
        const QRegularExpressionMatch m = QRegularExpression(QStringLiteral("\\(limit ([0-9.]+) GiB\\)")).match(r.err);
        QVERIFY2(m.hasMatch(), qPrintable(r.err));
        const double limit_gib = m.captured(1).toDouble();
        QVERIFY2(limit_gib > 0.8 * available_gib && limit_gib < 1.2 * available_gib,
                 qPrintable(QStringLiteral("limit %1 GiB, MemAvailable %2 GiB").arg(limit_gib).arg(available_gib)));
        QVERIFY(!QFile::exists(dir.path() + "/run"));
    }

    void planPredictsAndSearches() {
        Result r = run({"plan", "--preset", "resnet-mini", "--batch", "128", "--json"});
        QCOMPARE(r.code, 0);
        QJsonObject j = QJsonDocument::fromJson(r.out.toUtf8()).object();
        QVERIFY(j["device_total"].toDouble() > 0);
        QVERIFY(j["layers"].toArray().size() > 10);
        r = run({"plan", "--preset", "resnet-mini", "--batch", "128", "--budget", "24MiB"});
        QCOMPARE(r.code, 0);
        QVERIFY2(r.out.contains("Best: headroom train --batch 128"), qPrintable(r.out));
        QVERIFY2(r.out.contains("best: fits, fastest"), qPrintable(r.out));  // the front, in aligned columns
        QVERIFY2(!r.out.contains("over the budget"), qPrintable(r.out));
        QVERIFY2(r.out.contains("(--all lists them)"), qPrintable(r.out));
        const Result all = run({"plan", "--preset", "resnet-mini", "--batch", "128", "--budget", "24MiB", "--all"});
        QCOMPARE(all.code, 0);
        QVERIFY2(all.out.contains("over the budget"), qPrintable(all.out));  // every candidate
        QVERIFY(all.out.count('\n') > r.out.count('\n'));
        // nothing fits one process: how many zero3 ranks would, checked against the plans of that many
        // ranks (which fit) and of half as many, which fit with no micro-batch (the rank batch, /2, /4, /8)
        const Result none = run({"plan", "--preset", "resnet-mini", "--batch", "128", "--budget", "4MiB"});
        QCOMPARE(none.code, 1);
        const QRegularExpression said("sharded, it needs (\\d+) ranks: with --ranks \\1 (--[^\\n,]*), each rank needs");
        const QRegularExpressionMatch m = said.match(none.out);
        QVERIFY2(m.hasMatch(), qPrintable(none.out));
        const int n = m.captured(1).toInt();
        const QString flags = m.captured(2);
        QVERIFY(flags.contains("--shard zero3"));
        auto perRank = [&](int ranks, const QStringList& strategy) {
            QStringList args{"plan", "--preset", "resnet-mini", "--batch", "128", "--ranks", QString::number(ranks), "--json"};
            args << strategy;
            const Result p = run(args);
            double worst = 0;
            for (const QJsonValue& rank : QJsonDocument::fromJson(p.out.toUtf8()).object()["ranks"].toArray())
                worst = std::max(worst, rank.toObject()["device_total"].toDouble());
            return worst;
        };
        const double budget = 4.0 * 1024 * 1024;
        const double fits = perRank(n, flags.split(' ', Qt::SkipEmptyParts));
        QVERIFY2(fits > 0 && fits <= budget, qPrintable(QString::number(fits)));
        QVERIFY(n >= 2);
        if (n > 2) {
            const QStringList lean{"--shard", "zero3", "--precision", "bf16", "--checkpoint", "all", "--offload-optimizer"};
            const int rankBatch = 128 / (n / 2);
            for (int d : {1, 2, 4, 8}) {
                QStringList args = lean;
                if (d > 1) args << "--micro-batch" << QString::number(rankBatch / d);
                const double half = perRank(n / 2, args);
                QVERIFY2(half > budget, qPrintable(QString("%1 ranks, micro-batch %2: %3 bytes").arg(n / 2).arg(rankBatch / d).arg(half)));
            }
        }
    }
};

QTEST_GUILESS_MAIN(CliTest)
#include "test_cli.moc"
