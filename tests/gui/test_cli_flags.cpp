// The command-line parser (app/cli/flags): values that do not fit are refused, never narrowed or
// saturated; either/or flags in every spelling; floats and sizes in their ranges; one message naming the
// flag; every subcommand's flags are unique and documented; the defaults both front ends share.
#include <QtTest>

#include <QTemporaryDir>

#include <tuple>

#include "cli/cli.h"
#include "cli/flags.h"
#include "cli/output.h"
#include "notify/webhook_notifier.h"
#include "session/RunDefaults.h"
#include "train/config.h"

using namespace hrapp;

namespace {

CliRequest parse(const char* command, const QStringList& args) {
    const Subcommand* c = findSubcommand(QLatin1String(command));
    if (!c) qFatal("no subcommand %s", command);
    return parseCommandLine(*c, args);
}

// The message a bad command line gets ("" when it parses).
QString refusal(const char* command, const QStringList& args) {
    try {
        parse(command, args);
    } catch (const BadFlag& e) {
        return e.message;
    }
    return {};
}

}  // namespace

class TestCliFlags : public QObject {
    Q_OBJECT
private slots:
    void integersThatDoNotFitAreRefused_data() {
        QTest::addColumn<QStringList>("args");
        QTest::addColumn<QString>("message");
        QTest::newRow("epochs 2^32+1") << QStringList{"--epochs", "4294967297"} << "--epochs expects an integer from 1 to 100000, got '4294967297'";
        QTest::newRow("threads 2^32") << QStringList{"--threads", "4294967296"} << "--threads expects an integer from 0 to 1024";
        QTest::newRow("steps INT64_MAX") << QStringList{"--steps", "9223372036854775807"} << "--steps expects an integer from 1 to 1000000000,";
        QTest::newRow("steps past INT64_MAX") << QStringList{"--steps", "9223372036854775808"} << "--steps expects an integer";
        QTest::newRow("steps 1e9+1") << QStringList{"--steps", "1000000001"} << "--steps expects an integer from 1 to 1000000000,";
        QTest::newRow("batch 2^64") << QStringList{"--batch", "18446744073709551616"} << "--batch expects an integer from 1 to 16777216";
        QTest::newRow("seed 2^64") << QStringList{"--seed", "18446744073709551616"} << "--seed expects an integer from 0 to 18446744073709551615";
        QTest::newRow("seed -1") << QStringList{"--seed", "-1"} << "--seed expects an integer from 0";
        QTest::newRow("epochs 0") << QStringList{"--epochs", "0"} << "--epochs expects an integer from 1";
        QTest::newRow("epochs 3.5") << QStringList{"--epochs", "3.5"} << "got '3.5'";
        QTest::newRow("epochs +3") << QStringList{"--epochs", "+3"} << "got '+3'";
        QTest::newRow("epochs 0x10") << QStringList{"--epochs", "0x10"} << "got '0x10'";
        QTest::newRow("epochs empty") << QStringList{"--epochs="} << "got ''";
        QTest::newRow("train-limit -1") << QStringList{"--train-limit", "-1"} << "--train-limit expects an integer of at least 0";
        QTest::newRow("micro-batch 0") << QStringList{"--micro-batch", "0"} << "--micro-batch expects an integer from 1";
    }
    void integersThatDoNotFitAreRefused() {
        QFETCH(QStringList, args);
        QFETCH(QString, message);
        const QString m = refusal("train", args);
        QVERIFY2(m.contains(message), qPrintable(m));
    }

    void integersThatFitAreExact() {
        CliRequest r = parse("train", {"--steps", "1000000000", "--seed", "18446744073709551615", "--threads", "1024",
                                       "--batch=16777216", "--train-limit", "9223372036854775807"});
        QCOMPARE(r.config.steps, std::int64_t(1000000000));  // core's hr::kMaxSteps
        QCOMPARE(r.config.seed, std::uint64_t(18446744073709551615ULL));
        QCOMPARE(r.config.threads, 1024);
        QCOMPARE(r.config.batch, std::int64_t(16777216));
        QCOMPARE(r.config.train_limit, std::int64_t(9223372036854775807LL));
        // decimal always: a leading zero is not octal
        QCOMPARE(parse("train", {"--epochs", "010"}).config.epochs, 10);
    }

    // The flags take core's bounds (train/config.h, which validate_train_config checks): the largest value a
    // run accepts parses, and one more is refused by the flag with its range, before any run starts.
    void flagsTakeCoresLimits() {
        const QString steps = QString::number(hr::kMaxSteps), batch = QString::number(hr::kMaxBatch);
        QCOMPARE(parse("train", {"--steps", steps}).config.steps, hr::kMaxSteps);
        QCOMPARE(parse("train", {"--batch", batch}).config.batch, hr::kMaxBatch);
        QCOMPARE(parse("train", {"--micro-batch", batch}).config.strategy.micro_batch, hr::kMaxBatch);
        QCOMPARE(parse("train", {"--warmup", steps}).config.schedule.warmup_steps, hr::kMaxSteps);
        const QString steps1 = QString::number(hr::kMaxSteps + 1), batch1 = QString::number(hr::kMaxBatch + 1);
        for (const auto& [flag, value, max] : {std::tuple{"--steps", steps1, steps}, std::tuple{"--batch", batch1, batch},
                                              std::tuple{"--micro-batch", batch1, batch},
                                              std::tuple{"--warmup", steps1, steps}}) {
            const QString m = refusal("train", {flag, value});
            QVERIFY2(m.contains(QString("%1 expects an integer from").arg(flag)) && m.contains(QString(" to %1,").arg(max)),
                     qPrintable(m));
        }
    }

    void eitherOrInEverySpelling_data() {
        QTest::addColumn<QStringList>("args");
        QTest::addColumn<QString>("message");
        const QString es = "give either --epochs or --steps, not both";
        QTest::newRow("--epochs=3 --steps 5") << QStringList{"--epochs=3", "--steps", "5"} << es;
        QTest::newRow("--steps=5 --epochs=3") << QStringList{"--steps=5", "--epochs=3"} << es;
        QTest::newRow("--epochs 1 --steps 5") << QStringList{"--epochs", "1", "--steps", "5"} << es;
        QTest::newRow("-epochs 3 -steps 5") << QStringList{"-epochs", "3", "-steps", "5"} << es;
        QTest::newRow("--preset --model") << QStringList{"--model", "x.json", "--preset=mlp"} << "give either --preset or --model, not both";
    }
    void eitherOrInEverySpelling() {
        QFETCH(QStringList, args);
        QFETCH(QString, message);
        QCOMPARE(refusal("train", args), message);
    }

    void floatsInTheirRanges_data() {
        QTest::addColumn<QStringList>("args");
        QTest::addColumn<QString>("message");
        QTest::newRow("label smoothing 1") << QStringList{"--label-smoothing", "1"} << "--label-smoothing expects a number in [0, 1), got '1'";
        QTest::newRow("label smoothing -0.1") << QStringList{"--label-smoothing", "-0.1"} << "--label-smoothing expects a number in [0, 1)";
        QTest::newRow("lr 0") << QStringList{"--lr", "0"} << "--lr expects a number greater than 0, got '0'";
        QTest::newRow("lr -1") << QStringList{"--lr", "-1"} << "--lr expects a number greater than 0, got '-1'";
        QTest::newRow("lr nan") << QStringList{"--lr", "nan"} << "got 'nan'";
        QTest::newRow("lr inf") << QStringList{"--lr", "inf"} << "got 'inf'";
        QTest::newRow("lr 1e999") << QStringList{"--lr", "1e999"} << "got '1e999'";
        QTest::newRow("lr 0.1x") << QStringList{"--lr", "0.1x"} << "got '0.1x'";
        QTest::newRow("momentum 1") << QStringList{"--momentum", "1"} << "--momentum expects a number in [0, 1)";
        QTest::newRow("gamma 0") << QStringList{"--gamma", "0"} << "--gamma expects a number in (0, 1]";
        QTest::newRow("weight decay -1") << QStringList{"--weight-decay", "-1"} << "--weight-decay expects a number of at least 0";
    }
    void floatsInTheirRanges() {
        QFETCH(QStringList, args);
        QFETCH(QString, message);
        const QString m = refusal("train", args);
        QVERIFY2(m.contains(message), qPrintable(m));
    }

    void floatsThatFit() {
        CliRequest r = parse("train", {"--label-smoothing", "0.99", "--lr", "1e-3", "--momentum", "0", "--gamma", "1"});
        QCOMPARE(r.labelSmoothing, 0.99);
        QCOMPARE(r.config.optimizer.lr, 1e-3);
        QCOMPARE(r.config.optimizer.momentum, 0.0);
        QCOMPARE(r.config.schedule.gamma, 1.0);
    }

    void sizes() {
        QCOMPARE(parse("train", {"--memory-limit", "0.5GiB"}).config.memory_limit, std::size_t(512) << 20);
        QCOMPARE(parse("train", {"--memory-limit", "512MiB"}).config.memory_limit, std::size_t(512) << 20);
        QCOMPARE(parse("train", {"--memory-limit=1.5GB"}).config.memory_limit, std::size_t(1500000000));
        QCOMPARE(parse("train", {"--memory-limit", "4096"}).config.memory_limit, std::size_t(4096));
        QCOMPARE(parse("train", {"--memory-limit", "3 MiB"}).config.memory_limit, std::size_t(3) << 20);
        QString m = refusal("train", {"--memory-limit", "1e30"});
        QVERIFY2(m.startsWith("--memory-limit: ") && m.contains("'1e30' is larger than 1 EiB"), qPrintable(m));
        m = refusal("train", {"--memory-limit", "0"});
        QVERIFY2(m.startsWith("--memory-limit: ") && m.contains("cannot read the size '0'"), qPrintable(m));
        m = refusal("train", {"--memory-limit", "0.1B"});
        QVERIFY2(m.contains("less than one byte"), qPrintable(m));
        m = refusal("train", {"--memory-limit", "-3GiB"});
        QVERIFY2(m.contains("cannot read the size '-3GiB'"), qPrintable(m));
        m = refusal("train", {"--memory-limit", "4 parsecs"});
        QVERIFY2(m.contains("cannot read the size '4 parsecs'"), qPrintable(m));
        QCOMPARE(parse("plan", {"--budget", "device"}).budget, QStringLiteral("device"));
        QCOMPARE(parse("plan", {"--budget", "24MiB"}).budget, QStringLiteral("24MiB"));
        m = refusal("plan", {"--budget", "lots"});
        QVERIFY2(m.contains("--budget: cannot read the size 'lots'"), qPrintable(m));
    }

    void oneMessageNamingTheFlag() {
        QCOMPARE(refusal("train", {"--bogus"}), QStringLiteral("unknown option '--bogus' for 'headroom train'; see headroom train --help"));
        QCOMPARE(refusal("train", {"--bogus=3"}), QStringLiteral("unknown option '--bogus' for 'headroom train'; see headroom train --help"));
        QCOMPARE(refusal("train", {"--batch", "32", "--lr"}), QStringLiteral("--lr needs a value (see headroom train --help)"));
        QCOMPARE(refusal("train", {"--quiet=yes"}), QStringLiteral("--quiet takes no value (see headroom train --help)"));
        QCOMPARE(refusal("train", {"--epochs", "2", "--epochs=3"}), QStringLiteral("--epochs is given more than once; give it once"));
        QCOMPARE(refusal("train", {"--quiet", "--quiet"}), QStringLiteral("--quiet is given more than once; give it once"));
        QCOMPARE(refusal("train", {"stray"}), QStringLiteral("unexpected argument 'stray' for 'headroom train'; see headroom train --help"));
        QCOMPARE(refusal("plan", {"--epochs", "3"}), QStringLiteral("unknown option '--epochs' for 'headroom plan'; see headroom plan --help"));
        QCOMPARE(refusal("train", {"--optimizer", "lion"}), QStringLiteral("unknown optimizer 'lion' for --optimizer; use sgd, adam or adamw"));
        QCOMPARE(refusal("train", {"--precision", "int4"}), QStringLiteral("unknown precision 'int4' for --precision; use fp32, tf32, bf16 or fp16"));
        QCOMPARE(refusal("report", {}), QStringLiteral("'headroom report' needs RUN; see headroom report --help"));
        QCOMPARE(refusal("report", {"1", "2"}), QStringLiteral("unexpected argument '2' for 'headroom report'; see headroom report --help"));
        QCOMPARE(refusal("runs", {"--status", "running,exploded"}),
                 QStringLiteral("unknown status 'exploded' for --status; use running, finished, failed or stopped"));
    }

    void badInputExitsTwoAndWritesNothing() {
        QTemporaryDir dir;
        const QString out = dir.filePath("run");
        for (const QStringList& bad : {QStringList{"--epochs", "4294967297"}, QStringList{"--epochs=3", "--steps", "5"},
                                       QStringList{"--memory-limit", "1e30"}, QStringList{"--threads", "4294967296"}}) {
            OutputCapture c;
            QCOMPARE(runCommand(QStringList{"train", "--out", out, "--db", dir.filePath("runs.sqlite")} + bad), 2);
            QCOMPARE(c.err().count('\n'), 1);
            QVERIFY2(c.err().startsWith("headroom train: ") && c.err().contains("--"), qPrintable(c.err()));
            QVERIFY(c.out().isEmpty());
        }
        QVERIFY(QDir(dir.path()).entryList(QDir::AllEntries | QDir::NoDotAndDotDot | QDir::Hidden).isEmpty());
    }

    void defaultsAreTheWindows() {
        const CliRequest r = parse("train", {});
        QCOMPARE(r.config.optimizer.kind, std::string("sgd"));
        QCOMPARE(r.config.optimizer.momentum, 0.9);
        QCOMPARE(r.config.device, std::string("auto"));
        QCOMPARE(r.config.optimizer.lr, 0.01);
        QCOMPARE(r.config.epochs, 1);
        QCOMPARE(r.config.batch, std::int64_t(64));
        const hr::TrainConfig d = defaultTrainConfig();
        QCOMPARE(d.optimizer.momentum, r.config.optimizer.momentum);
        QCOMPARE(d.device, r.config.device);
        // adam starts from its own rate unless one is given
        QCOMPARE(parse("train", {"--optimizer", "adam"}).config.optimizer.lr, 1e-3);
        QCOMPARE(parse("train", {"--optimizer", "adam", "--lr", "0.02"}).config.optimizer.lr, 0.02);
    }

    void everySubcommandsFlagsAreUniqueAndDocumented() {
        QVERIFY(subcommands().size() >= 6);
        for (const Subcommand& c : subcommands()) {
            const QStringList names = flagNames(c);
            QCOMPARE(QSet<QString>(names.begin(), names.end()).size(), names.size());
            const QString help = helpText(c);
            QVERIFY2(help.startsWith(QStringLiteral("Usage: headroom %1").arg(QLatin1String(c.name))), c.name);
            for (const QString& n : names) QVERIFY2(help.contains("--" + n + " ") || help.contains("--" + n + "\n"), qPrintable(n));
            OutputCapture out;
            QCOMPARE(runCommand({QLatin1String(c.name), "--help"}), 0);
            QCOMPARE(out.out(), help);
        }
        // train and plan share the model, memory, optimizer and device flags, so a train command line
        // minus its length and output flags plans the same run
        const QStringList train = flagNames(*findSubcommand("train")), plan = flagNames(*findSubcommand("plan"));
        for (const char* f : {"preset", "model", "data", "batch", "precision", "checkpoint", "micro-batch", "accumulate",
                              "offload-optimizer", "memory-limit", "optimizer", "momentum", "device", "threads"}) {
            QVERIFY2(train.contains(f), f);
            QVERIFY2(plan.contains(f), f);
        }
    }

    void notifyTargets() {
        WebhookNotifier::Settings s;
        QString error;
        QVERIFY(parseNotifyTarget("https://qyapi.weixin.qq.com/cgi-bin/webhook/send?key=k", &s, &error));
        QCOMPARE(s.format, WebhookNotifier::Template::WeCom);
        QCOMPARE(s.url.toString(), QStringLiteral("https://qyapi.weixin.qq.com/cgi-bin/webhook/send?key=k"));
        QVERIFY(parseNotifyTarget("https://oapi.dingtalk.com/robot/send?access_token=t", &s, &error));
        QCOMPARE(s.format, WebhookNotifier::Template::DingTalk);
        QVERIFY(parseNotifyTarget("https://open.feishu.cn/open-apis/bot/v2/hook/x", &s, &error));
        QCOMPARE(s.format, WebhookNotifier::Template::Feishu);
        QVERIFY(parseNotifyTarget("https://hooks.slack.com/services/A/B/C", &s, &error));
        QCOMPARE(s.format, WebhookNotifier::Template::Slack);
        QVERIFY(parseNotifyTarget("http://127.0.0.1:8080/hook", &s, &error));
        QCOMPARE(s.format, WebhookNotifier::Template::Generic);
        QVERIFY(s.onFinished && s.onFailed);
        QVERIFY(parseNotifyTarget("slack:http://127.0.0.1:8080/hook", &s, &error));
        QCOMPARE(s.format, WebhookNotifier::Template::Slack);
        QCOMPARE(s.url.toString(), QStringLiteral("http://127.0.0.1:8080/hook"));
        QVERIFY(!parseNotifyTarget("carrier-pigeon:http://x", &s, &error));
        QVERIFY2(error.contains("unknown message format 'carrier-pigeon'"), qPrintable(error));
        QVERIFY(!parseNotifyTarget("ftp://example.org/x", &s, &error));
        QVERIFY(!parseNotifyTarget("example.org", &s, &error));
        QCOMPARE(parse("train", {"--notify", "settings"}).notify, QStringLiteral("settings"));
        const QString m = refusal("train", {"--notify", "nowhere"});
        QVERIFY2(m.startsWith("--notify: 'nowhere' is not a webhook"), qPrintable(m));
    }
};

QTEST_MAIN(TestCliFlags)
#include "test_cli_flags.moc"
