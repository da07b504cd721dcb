// The `headroom` command line: the table of subcommands, the top-level help, and the dispatch (or
// the main window when no subcommand is given). The flags live in flags.cpp.
#include "cli/cli.h"

#include <unistd.h>

#include <QGuiApplication>
#include <QCoreApplication>
#include <QDir>
#include <QFile>
#include <QLocale>
#include <QTranslator>
#include <cstdlib>
#include <memory>

#include "base/log.h"
#include "cli/commands.h"
#include "cli/flags.h"
#include "cli/output.h"
#include "settings/Installation.h"
#include "cli/report_command.h"

namespace hrapp {

namespace {


}  // namespace

// To add a subcommand: one entry here. Its flags come from the groups it lists (flags.cpp).
const std::vector<Subcommand>& subcommands() {
    static const std::vector<Subcommand> table = {
        {"train", "[options]", QT_TRANSLATE_NOOP("Cli", "train a model headless"),
         QT_TRANSLATE_NOOP("Cli",
                           "Trains a model headless and writes DIR/model.safetensors (PyTorch state_dict names), then\n"
                           "DIR/run.json (config, per-epoch metrics, final metrics, predicted and measured memory; see\n"
                           "docs/run-json.md), so a folder with run.json is complete. The first line says which device\n"
                           "trains and why; the last line printed is test_accuracy=0.xxxx (a language model: test_loss=X,\n"
                           "the validation loss per token, after a tokens/s line). Ctrl-C stops after the current step\n"
                           "and writes the results so far. With --prune/--quantize the written weights are evaluated\n"
                           "again pruned/quantised (run.json final.compression; the report's what-if section)."),
         {FlagGroup::model, FlagGroup::data, FlagGroup::length, FlagGroup::memory, FlagGroup::optimizer,
          FlagGroup::training, FlagGroup::sequence, FlagGroup::tokens, FlagGroup::text, FlagGroup::device, FlagGroup::run, FlagGroup::history,
          FlagGroup::whatif, FlagGroup::timeline},
         0, 0, false, runTrainCommand,
         QT_TRANSLATE_NOOP("Cli", "Exit codes: 0 finished, 1 failed or stopped, 2 bad input (a flag, file, model spec,\n"
                                  "dataset, a diverging loss, out of memory).")},
        {"eval", "--weights FILE [options]", QT_TRANSLATE_NOOP("Cli", "test accuracy of a weights file (Headroom's or PyTorch's)"),
         QT_TRANSLATE_NOOP("Cli",
                           "Evaluates a safetensors weights file on a dataset's test split and prints test_loss= and\n"
                           "test_accuracy=. The model comes from --preset/--model, else from the file's metadata, else\n"
                           "seed-cnn. Names may be Headroom's, PyTorch's (DDP's module. prefix is stripped), or differ:\n"
                           "then tensors are matched by order and shape and the match is printed as a table.\n"
                           "--prune S and --quantize int8|int4 evaluate again after pruning or quantising the weight\n"
                           "tensors and print test_loss_after=, test_accuracy_after= and the weights' bytes stored so\n"
                           "(weights_bytes=, weights_bytes_after=); the file is not changed.\n"
                           "A language model (--data text:...) is scored on the validation windows a run evaluates:\n"
                           "the loss per token and the share of next tokens predicted, with the tokenizer written\n"
                           "next to the weights (else --tokenizer, built from the text as a run builds it)."),
         {FlagGroup::weights, FlagGroup::whatif, FlagGroup::model, FlagGroup::data, FlagGroup::sequence, FlagGroup::tokens,
          FlagGroup::device},
         0, 0, false, runEvalCommand,
         QT_TRANSLATE_NOOP("Cli", "Exit codes: 0 evaluated, 2 bad input (a file, model or dataset that does not fit).")},
        {"plan", "[options]", QT_TRANSLATE_NOOP("Cli", "predict a run's memory by category and layer; --budget finds\nthe strategies that fit"),
         QT_TRANSLATE_NOOP("Cli",
                           "Predicts the memory of a training run before it starts: bytes per category (parameters, gradients,\n"
                           "optimizer state, master weights, activations, workspace, data) on the device and on the host, per\n"
                           "layer, and the step cost of the chosen strategies. With --budget it searches precision,\n"
                           "checkpointing, micro-batch/accumulation and optimizer offload for the configuration that fits\n"
                           "and is predicted fastest, and says why each other one ranks lower or does not fit. With --prune\n"
                           "or --quantize it adds what the trained weights would take stored pruned or quantised."),
         {FlagGroup::model, FlagGroup::data, FlagGroup::memory, FlagGroup::optimizer, FlagGroup::sequence, FlagGroup::device,
          FlagGroup::plan, FlagGroup::whatif, FlagGroup::timeline},
         0, 0, false, runPlanCommand},
        {"export", "RUN --hf DIR | --peft DIR | --gguf FILE | --onnx FILE [options]", QT_TRANSLATE_NOOP("Cli", "write a trained model as a Hugging Face model folder, a peft adapter, a GGUF file or an ONNX file"),
         QT_TRANSLATE_NOOP("Cli",
                           "RUN is a run folder or its model.safetensors. --hf DIR (a LLaMA-family model): DIR gets\n"
                           "config.json, model.safetensors (sharded with model.safetensors.index.json above --shard-size)\n"
                           "and the run's tokenizer file; transformers' from_pretrained(DIR) loads it. A LoRA run's adapters\n"
                           "are merged into the weights; its run folder holds them in peft's layout as well\n"
                           "(adapter_model.safetensors, adapter_config.json); --peft DIR writes them into DIR.\n"
                           "--gguf FILE (a LLaMA-family model): one GGUF file that llama.cpp, Ollama and LM Studio load: the\n"
                           "weights in --type (f16 unless asked), the tokenizer (byte, or a byte-level BPE tokenizer.json) and\n"
                           "the chat template of its family. A model or tokenizer GGUF cannot hold is refused, nothing written.\n"
                           "--onnx FILE (an image or table model): one ONNX file at opset 17 for ONNX Runtime, input\n"
                           "\"input\" (batch, C, H, W) pixels on the [0, 1] scale or (batch, F) raw table features, the\n"
                           "run's normalisation in the graph, output \"logits\" (batch, classes); docs/export.md."),
         {FlagGroup::exporting, FlagGroup::whatif}, 1, 1, false, runExportCommand},
        {"generate", "--run RUN|--weights FILE [options]", QT_TRANSLATE_NOOP("Cli", "continue a prompt with a trained language model"),
         QT_TRANSLATE_NOOP("Cli",
                           "Loads a language model's weights and the tokenizer stored next to them (a run from the history,\n"
                           "a run folder, or a model.safetensors file) and prints the prompt followed by the generated text.\n"
                           "Temperature 0 picks the most likely token every time (greedy: the same text on every call);\n"
                           "otherwise the same --seed, weights and prompt give the same text."),
         {FlagGroup::generate, FlagGroup::history}, 0, 0, false, runGenerateCommand},
        {"presets", "[--json NAME]", QT_TRANSLATE_NOOP("Cli", "list the built-in models"),
         QT_TRANSLATE_NOOP("Cli", "Lists the built-in models with their parameter counts; with --json NAME, prints that\n"
                                  "model's spec (docs/model-spec.md)."),
         {FlagGroup::presets}, 0, 1, false, runPresetsCommand},
        {"devices", "", QT_TRANSLATE_NOOP("Cli", "list the devices Headroom can train on"),
         QT_TRANSLATE_NOOP("Cli", "Lists the CPU and the CUDA devices, or why there are none."), {}, 0, 0, false,
         runDevicesCommand},
        {"runs", "[options]", QT_TRANSLATE_NOOP("Cli", "list the run history"),
         QT_TRANSLATE_NOOP("Cli", "Lists the runs in the history, newest first."), {FlagGroup::runs, FlagGroup::history},
         0, 0, false, runRunsCommand},
        {"report", "RUN [options]", QT_TRANSLATE_NOOP("Cli", "write a run's report (html, pdf, json, csv)"),
         QT_TRANSLATE_NOOP("Cli", "Writes the report of RUN: a run id, 'last', or a run's name (see headroom runs)."),
         {FlagGroup::report, FlagGroup::history}, 1, 1, true, run_report_command},
    };
    return table;
}

namespace {

QString mainHelp() {
    QString out = Cli::tr("Headroom %1: train neural networks within your GPU's memory, and see why memory is what it is.\n"
                     "\n"
                     "Usage:\n")
                      .arg(QString::fromUtf8(HEADROOM_VERSION));
    constexpr int kColumn = 34;
    auto line = [&](const QString& left, const QString& text) {
        const QStringList lines = text.split(QLatin1Char('\n'));
        out += (QStringLiteral("  ") + left).leftJustified(kColumn - 1) + QLatin1Char(' ') + lines.first() + QLatin1Char('\n');
        for (int i = 1; i < lines.size(); ++i) out += QString(kColumn, QLatin1Char(' ')) + lines[i] + QLatin1Char('\n');
    };
    line(QStringLiteral("headroom"), Cli::tr("open the workbench window"));
    for (const Subcommand& c : subcommands()) {
        QString text = Cli::tr(c.summary);
        if (c.maxPositional > 0 || !c.groups.empty()) {
            QStringList lines = text.split(QLatin1Char('\n'));
            if (lines.size() == 1) text += QLatin1Char(' ') + Cli::tr("(see headroom %1 --help)").arg(QLatin1String(c.name));
        }
        line(QStringLiteral("headroom %1 %2").arg(QLatin1String(c.name), QLatin1String(c.usage)).trimmed(), text);
    }
    line(QStringLiteral("headroom --version"), Cli::tr("print the version"));
    line(QStringLiteral("headroom --help"), Cli::tr("this help"));
    out += QLatin1Char('\n') + Cli::tr("Exit codes: 0 success, 1 failure, 2 bad input (a flag, file, model spec or dataset).\n");
    return out;
}

bool haveDisplay() {
    const char* platform = std::getenv("QT_QPA_PLATFORM");
    if (platform && *platform) return true;  // offscreen, xcb, wayland: the user chose
    return (std::getenv("DISPLAY") && *std::getenv("DISPLAY")) ||
           (std::getenv("WAYLAND_DISPLAY") && *std::getenv("WAYLAND_DISPLAY"));
}

// Installs the zh_CN (or other) translation for command-line messages when the locale asks for it.
void installCliTranslator() {
    static QTranslator translator;
    for (const QString& share : shareDirs())  // an installed or build-tree copy first, then the compiled-in one
        if (translator.load(QLocale(), QStringLiteral("headroom"), QStringLiteral("_"),
                            share + QStringLiteral("/headroom/translations")))
            break;
    if (!translator.isEmpty() ||
        translator.load(QLocale(), QStringLiteral("headroom"), QStringLiteral("_"), QStringLiteral(":/i18n")))
        QCoreApplication::installTranslator(&translator);
}

}  // namespace

void installCliLogSink() {
    const QByteArray want = qgetenv("HEADROOM_LOG").toLower();
    const hr::LogLevel threshold = want == "debug" ? hr::LogLevel::debug
                                   : want == "info" ? hr::LogLevel::info
                                                    : hr::LogLevel::warning;
    hr::set_log_sink([threshold](hr::LogLevel level, const std::string& message) {
        if (static_cast<int>(level) < static_cast<int>(threshold)) return;
        eprint(QStringLiteral("headroom: %1: %2\n").arg(QLatin1String(hr::log_level_name(level)), QString::fromStdString(message)));
    });
}

int runCommand(const QStringList& args) {
    if (args.isEmpty()) {
        print(mainHelp());
        return 0;
    }
    const QString& first = args.first();
    if (first == QLatin1String("--help") || first == QLatin1String("-h") || first == QLatin1String("help")) {
        if (args.size() >= 2)
            if (const Subcommand* c = findSubcommand(args[1])) {
                print(helpText(*c));
                return 0;
            }
        print(mainHelp());
        return 0;
    }
    if (first == QLatin1String("--version") || first == QLatin1String("-v")) {
        print(QStringLiteral("headroom %1\n").arg(QString::fromUtf8(HEADROOM_VERSION)));
        return 0;
    }
    const Subcommand* cmd = findSubcommand(first);
    if (!cmd) {
        QStringList names;
        for (const Subcommand& c : subcommands()) names << QLatin1String(c.name);
        eprint(Cli::tr("headroom: unknown command '%1'; use %2 (see headroom --help)\n").arg(first, names.join(QStringLiteral(", "))));
        return 2;
    }
    CliRequest request;
    try {
        request = parseCommandLine(*cmd, args.mid(1));
    } catch (const BadFlag& e) {
        eprint(Cli::tr("headroom %1: %2\n").arg(first, e.message));
        return 2;
    }
    if (request.help) {
        print(helpText(*cmd));
        return 0;
    }
    return cmd->run(request);
}

int run_main(int argc, char** argv, WindowMain window) {
    QStringList args;
    for (int i = 1; i < argc; ++i) args << QString::fromLocal8Bit(argv[i]);
    // Qt warns on every start when XDG_RUNTIME_DIR is unset (servers, containers, CI): give it one.
    if (qEnvironmentVariableIsEmpty("XDG_RUNTIME_DIR")) {
        QByteArray dir = QDir::tempPath().toLocal8Bit() + "/runtime-" + QByteArray::number(::getuid());
        QDir().mkpath(QString::fromLocal8Bit(dir));
        QFile::setPermissions(QString::fromLocal8Bit(dir), QFileDevice::ReadOwner | QFileDevice::WriteOwner |
                                                                QFileDevice::ExeOwner);
        qputenv("XDG_RUNTIME_DIR", dir);
    }
    if (args.isEmpty() || args.first() == QLatin1String("gui")) {
        if (!window) {
            QCoreApplication app(argc, argv);
            installCliTranslator();
            eprint(Cli::tr("headroom: this program has no window; use a subcommand (see --help).\n"));
            return 2;
        }
        if (args.isEmpty() && !haveDisplay()) {
            QCoreApplication app(argc, argv);
            installCliTranslator();
            eprint(Cli::tr("headroom: no display found, so the window cannot open.\n"
                      "Run headless instead, for example:\n"
                      "  headroom train --preset seed-cnn --data fashion-mnist --epochs 1 --out runs/demo\n"
                      "or start the window under a display (DISPLAY / WAYLAND_DISPLAY), e.g. with xvfb-run.\n"
                      "See headroom --help.\n"));
            return 2;
        }
        return window(argc, argv);
    }
    // Subcommands that draw (the report's charts and PDF) need a QGuiApplication, offscreen where there is
    // no display; none needs widgets (headroom-cli links none).
    const Subcommand* cmd = findSubcommand(args.first());
    std::unique_ptr<QCoreApplication> app;
    if (cmd && cmd->needsGui) {
        if (!haveDisplay()) qputenv("QT_QPA_PLATFORM", "offscreen");
        app = std::make_unique<QGuiApplication>(argc, argv);
    } else {
        app = std::make_unique<QCoreApplication>(argc, argv);
    }
    QCoreApplication::setApplicationName(QStringLiteral("Headroom"));
    QCoreApplication::setOrganizationName(QStringLiteral("Headroom"));
    QCoreApplication::setApplicationVersion(QStringLiteral(HEADROOM_VERSION));
    installCliTranslator();
    installCliLogSink();
    const int code = runCommand(args);
    hr::set_log_sink(nullptr);
    return code;
}

}  // namespace hrapp
