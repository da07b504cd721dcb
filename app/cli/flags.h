#pragma once
// The one parser of the `headroom` command line (every subcommand), on Qt's QCommandLineParser, with a
// typed, range-checked value for every flag. How to extend it is said at the top of flags.cpp.
//
// A subcommand (cli.cpp's table) names the flag groups it takes; a flag (flags.cpp's table) belongs to
// one group and says how its value lands in a CliRequest. Bad input throws BadFlag with one message
// that names the flag and what to write instead; the caller prints it and exits with code 2 before
// anything is written.
#include <QSet>
#include <QString>
#include <QStringList>
#include <limits>
#include <string>
#include <vector>

#include "train/config.h"

namespace hrapp {

struct BadFlag {
    QString message;
};

// Everything one command line asked for.
struct CliRequest {
    QString command;               // "train", "plan", ...
    hr::TrainConfig config;        // defaultTrainConfig() with the run flags applied
    std::string preset = "seed-cnn", modelFile;
    std::string modelConfig;       // --model-config: a Hugging Face config.json or its folder (nn/hf_config.h)
    bool presetFromData = false;   // no --preset or --model: preset is the data's (hr::default_preset_for_data)
    double labelSmoothing = -1;    // < 0: the model's own
    QString out;                   // train: the output folder; report: the file
    QString db;                    // run history database ("" : the default)
    QString name;                  // the run's name in the history
    QString notify;                // train: webhook (URL, FORMAT:URL or "settings")
    QString budget;                // plan: SIZE or "device"
    bool timeline = false;         // train, plan: print one step's memory timeline and its peak
    QString trace;                 // train, plan: write that timeline as Chrome trace JSON to this file
    QString format;                // report: html | pdf | json | csv ("" : from --out's suffix)
    QStringList statuses;          // runs: running, finished, failed, stopped
    QString filter;                // runs: text
    int limit = 0;                 // runs: at most this many (0: all)
    QString hosts;                 // train --hosts HOST[:SLOTS],...: mpirun --host (several machines)
    int ranks = 1;                 // train: processes to launch through mpirun; plan: the world size
    bool quiet = false, noHistory = false, json = false, all = false, help = false;
    QString resume;                // train --resume DIR: the run folder to continue
    QString configFile;            // train --config FILE.json: a whole TrainConfig (a run folder's config.json)
    QString pauseFile;             // train --pause-file FILE: paused between steps while FILE exists
    QString weights;               // eval / generate --weights FILE (a model.safetensors file)
    QString exportHf;              // export --hf DIR: the Hugging Face model folder to write
    QString exportOnnx;            // export --onnx FILE: the ONNX file to write (exporters/onnx)
    QString exportPeft;            // export --peft DIR: a LoRA run's peft adapter folder to write
    std::uint64_t shardBytes = 0;  // export --shard-size SIZE (0: 5 GB, transformers' default)
    QString exportGguf;            // export --gguf FILE: the GGUF file to write
    QString ggufType;              // export --type f32|f16|bf16|q8_0 (empty: f16)
    bool ollama = false;           // export --ollama: a Modelfile beside the GGUF file
    QStringList positional;        // RUN of report, NAME of presets
    // generate (app/cli/generate_command.cpp)
    QString run;                   // a run id, 'last', a run's name, or a run folder
    QString prompt;
    std::int64_t tokens = 200;
    double temperature = 0.8;
    int topK = 0;
    std::uint64_t seed = 1;
    int threads = 0;
    bool noKvCache = false;        // generate --no-kv-cache: re-run whole windows (the reference path)
    QString asExported;            // generate --as-exported T: the weights rounded as a GGUF file of type T holds them
    bool showIds = false;          // generate --ids: the prompt's and the generated token ids on stderr
    bool before = false;           // generate --before: the run's starting model (core/train/before_after.h)
    QSet<QString> given;           // long names of the flags on the command line ("epochs", ...)
    bool has(const char* flag) const { return given.contains(QLatin1String(flag)); }
};

// The groups a subcommand picks its flags from; each is one section of its --help.
enum class FlagGroup {
    model,      // --preset, --model
    data,       // --data, --train-limit, --test-limit
    length,     // --epochs, --steps
    memory,     // --batch and the memory strategies
    optimizer,  // --optimizer, --momentum (what decides optimizer memory)
    training,   // learning rate, schedule, regularisation, loss
    device,     // --device, --threads
    run,        // --seed, --out, --name, --no-history, --quiet, --notify
    history,    // --db
    plan,       // --budget, --json, --all
    report,     // --format, --out FILE
    runs,       // --status, --filter, --limit
    presets,    // --json
    weights,    // eval: --weights
    whatif,     // train and eval: --prune, --quantize (TrainConfig::what_if)
    sequence,   // --seq (language models; train and plan)
    tokens,     // --tokenizer, --eval-tokens (language models; train and eval)
    text,       // --eval-every (train)
    timeline,   // --timeline, --trace, --timeline-step (one step's memory timeline; train and plan)
    exporting,  // headroom export: --hf, --shard-size
    generate,   // headroom generate: --run, --weights, --prompt, --tokens, --temperature, --top-k, --seed
};

struct Subcommand {
    const char* name;
    const char* usage;                // after "headroom NAME " in the usage line, e.g. "RUN [options]"
    const char* summary;              // QT_TRANSLATE_NOOP("Cli", ...): its line in headroom --help
    const char* about;                // QT_TRANSLATE_NOOP("Cli", ...): the top of headroom NAME --help
    std::vector<FlagGroup> groups;
    int minPositional = 0, maxPositional = 0;
    bool needsGui = false;            // creates a QGuiApplication (fonts, the charts' images, PDF), offscreen without a display
    int (*run)(const CliRequest&) = nullptr;
    const char* epilog = nullptr;     // QT_TRANSLATE_NOOP("Cli", ...): after the flags in --help
};

// The subcommands, in the order headroom --help lists them (cli.cpp).
const std::vector<Subcommand>& subcommands();
const Subcommand* findSubcommand(const QString& name);

// Parses the arguments after the subcommand's name. Throws BadFlag.
CliRequest parseCommandLine(const Subcommand& command, const QStringList& args);
QString helpText(const Subcommand& command);
// The long names of the flags a subcommand takes, in --help order ("preset", "model", ...).
QStringList flagNames(const Subcommand& command);

// What a flag's apply function reads its value with. Each getter checks the whole text and the range
// and throws BadFlag naming the flag ("--epochs expects an integer from 1 to 100000, got '0'").
class FlagValue {
public:
    FlagValue(QString flag, QString text) : m_flag(std::move(flag)), m_text(std::move(text)) {}
    const QString& flag() const { return m_flag; }  // "--epochs"
    const QString& text() const { return m_text; }
    std::string str() const { return m_text.toStdString(); }

    template <typename T>
    T integer(T min, T max = std::numeric_limits<T>::max()) const {
        if constexpr (std::is_unsigned_v<T>)
            return static_cast<T>(unsignedIn(static_cast<std::uint64_t>(min), static_cast<std::uint64_t>(max)));
        else
            return static_cast<T>(signedIn(static_cast<std::int64_t>(min), static_cast<std::int64_t>(max)));
    }
    // A finite number within [min, max], with open ends where minOpen/maxOpen (e.g. lr > 0: minOpen).
    double real(double min, double max = std::numeric_limits<double>::infinity(), bool minOpen = false,
                bool maxOpen = false) const;
    // A size: 512MiB, 4GiB, 1.5GB, 4096 (bytes); hr::parse_bytes.
    std::size_t bytes() const;
    // One of `options`; noun names the kind of value in the message ("unknown optimizer 'lion' ...").
    std::string choice(const char* noun, const std::vector<std::string>& options) const;

private:
    std::int64_t signedIn(std::int64_t min, std::int64_t max) const;
    std::uint64_t unsignedIn(std::uint64_t min, std::uint64_t max) const;
    QString m_flag, m_text;
};

// "a, b or c" in the user's language.
QString alternatives(const std::vector<std::string>& options);

}  // namespace hrapp

namespace hrapp {
// Fills request.config.model from --preset or --model and applies --label-smoothing
// (hr::InputError for a bad file or name).
void resolveModel(CliRequest& request);
}  // namespace hrapp
