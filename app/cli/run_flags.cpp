#include "cli/run_flags.h"

#include <QCoreApplication>
#include <algorithm>
#include <cmath>
#include <functional>
#include <map>
#include <set>

#include "nn/model_spec.h"
#include "plan/planner.h"

namespace hrapp {

namespace {

QString q(const std::string& s) { return QString::fromStdString(s); }

std::int64_t parseInt(const std::string& flag, const std::string& v, std::int64_t min) {
    try {
        std::size_t pos = 0;
        long long x = std::stoll(v, &pos);
        if (pos == v.size() && x >= min) return x;
    } catch (...) {
    }
    throw BadFlag{QCoreApplication::translate("Cli", "%1 expects an integer of at least %2, got '%3'").arg(q(flag)).arg(min).arg(q(v))};
}

double parseReal(const std::string& flag, const std::string& v) {
    try {
        std::size_t pos = 0;
        double x = std::stod(v, &pos);
        if (pos == v.size() && std::isfinite(x)) return x;
    } catch (...) {
    }
    throw BadFlag{QCoreApplication::translate("Cli", "%1 expects a number, got '%2'").arg(q(flag)).arg(q(v))};
}

}  // namespace

RunFlags parseRunFlags(const std::vector<std::string>& args, const std::string& command) {
    RunFlags f;
    hr::TrainConfig& c = f.config;
    bool lrGiven = false;
    std::map<std::string, std::function<void(const std::string&)>> withValue = {
        {"--preset", [&](const std::string& v) { f.preset = v; }},
        {"--model", [&](const std::string& v) { f.modelFile = v; }},
        {"--data", [&](const std::string& v) { c.data = v; }},
        {"--train-limit", [&](const std::string& v) { c.train_limit = parseInt("--train-limit", v, 0); }},
        {"--test-limit", [&](const std::string& v) { c.test_limit = parseInt("--test-limit", v, 0); }},
        {"--epochs", [&](const std::string& v) { c.epochs = static_cast<int>(parseInt("--epochs", v, 1)); }},
        {"--steps", [&](const std::string& v) { c.steps = parseInt("--steps", v, 1); }},
        {"--batch", [&](const std::string& v) { c.batch = parseInt("--batch", v, 1); }},
        {"--optimizer", [&](const std::string& v) { c.optimizer.kind = v; }},
        {"--lr", [&](const std::string& v) { c.optimizer.lr = parseReal("--lr", v); lrGiven = true; }},
        {"--momentum", [&](const std::string& v) { c.optimizer.momentum = parseReal("--momentum", v); }},
        {"--weight-decay", [&](const std::string& v) { c.optimizer.weight_decay = parseReal("--weight-decay", v); }},
        {"--schedule", [&](const std::string& v) { c.schedule.kind = v; }},
        {"--warmup", [&](const std::string& v) { c.schedule.warmup_steps = parseInt("--warmup", v, 0); }},
        {"--step-size", [&](const std::string& v) { c.schedule.step_size = parseInt("--step-size", v, 1); }},
        {"--gamma", [&](const std::string& v) { c.schedule.gamma = parseReal("--gamma", v); }},
        {"--min-lr", [&](const std::string& v) { c.schedule.min_lr = parseReal("--min-lr", v); }},
        {"--label-smoothing", [&](const std::string& v) { f.labelSmoothing = parseReal("--label-smoothing", v); }},
        {"--seed", [&](const std::string& v) { c.seed = static_cast<std::uint64_t>(parseInt("--seed", v, 0)); }},
        {"--device", [&](const std::string& v) { c.device = v; }},
        {"--threads", [&](const std::string& v) { c.threads = static_cast<int>(parseInt("--threads", v, 1)); }},
        {"--out", [&](const std::string& v) { f.outDir = v; }},
        {"--db", [&](const std::string& v) { f.dbPath = v; }},
        {"--name", [&](const std::string& v) { f.runName = v; }},
        {"--precision", [&](const std::string& v) { c.strategy.precision = v; }},
        {"--checkpoint", [&](const std::string& v) { c.strategy.checkpoint = v; }},
        {"--micro-batch", [&](const std::string& v) { c.strategy.micro_batch = parseInt("--micro-batch", v, 1); }},
        {"--accumulate", [&](const std::string& v) { c.strategy.accumulate = parseInt("--accumulate", v, 1); }},
        {"--memory-limit",
         [&](const std::string& v) {
             try {
                 c.memory_limit = hr::parse_bytes(v);
             } catch (const std::exception& e) {
                 throw BadFlag{QCoreApplication::translate("Cli", "--memory-limit: %1").arg(q(e.what()))};
             }
         }},
        {"--budget", [&](const std::string& v) { f.budget = v; }},
    };
    std::map<std::string, std::function<void()>> switches = {
        {"--nesterov", [&] { c.optimizer.nesterov = true; }},
        {"--quiet", [&] { f.quiet = true; }},
        {"--no-history", [&] { f.noHistory = true; }},
        {"--offload-optimizer", [&] { c.strategy.offload_optimizer = true; }},
        {"--json", [&] { f.json = true; }},
    };
    // what each command takes
    const std::set<std::string> trainOnly = {"--data", "--train-limit", "--test-limit", "--epochs", "--steps",
                                             "--lr", "--weight-decay", "--schedule", "--warmup", "--step-size",
                                             "--gamma", "--min-lr", "--label-smoothing", "--seed", "--out", "--db",
                                             "--name", "--quiet", "--no-history", "--nesterov", "--memory-limit"};
    const std::set<std::string> planOnly = {"--budget", "--json"};
    bool presetGiven = false;
    for (std::size_t i = 0; i < args.size(); ++i) {
        std::string a = args[i], value;
        bool hasInline = false;
        if (a == "--help" || a == "-h") {
            f.help = true;
            return f;
        }
        if (auto eq = a.find('='); a.rfind("--", 0) == 0 && eq != std::string::npos) {
            value = a.substr(eq + 1);
            a = a.substr(0, eq);
            hasInline = true;
        }
        const bool allowed = command == "train" ? planOnly.count(a) == 0
                                                : (trainOnly.count(a) == 0 || a == "--data" || a == "--train-limit" ||
                                                   a == "--test-limit");
        auto it = withValue.find(a);
        auto sw = switches.find(a);
        if (allowed && it != withValue.end()) {
            if (!hasInline) {
                if (i + 1 >= args.size())
                    throw BadFlag{QCoreApplication::translate("Cli", "%1 needs a value (see headroom %2 --help)").arg(q(a), q(command))};
                value = args[++i];
            }
            if (a == "--preset") presetGiven = true;
            it->second(value);
        } else if (allowed && sw != switches.end() && !hasInline) {
            sw->second();
        } else {
            throw BadFlag{QCoreApplication::translate("Cli", "unknown option '%1' for 'headroom %2'; see headroom %2 --help").arg(q(args[i]), q(command))};
        }
    }
    if (presetGiven && !f.modelFile.empty()) throw BadFlag{QCoreApplication::translate("Cli", "give either --preset or --model, not both")};
    if (!lrGiven && c.optimizer.kind != "sgd") c.optimizer.lr = 1e-3;
    if (c.steps > 0 && std::find(args.begin(), args.end(), std::string("--epochs")) != args.end())
        throw BadFlag{QCoreApplication::translate("Cli", "give either --epochs or --steps, not both")};
    return f;
}

void resolveModel(RunFlags& f) {
    hr::TrainConfig& c = f.config;
    if (!f.modelFile.empty()) {
        c.model = hr::load_model_spec(f.modelFile);
        c.model_source = "file:" + f.modelFile;
    } else {
        // presets take the dataset's sample shape (28x28 grey for the IDX datasets)
        c.model = hr::preset_model(f.preset, {1, 28, 28}, 10);
        c.model_source = "preset:" + f.preset;
    }
    if (f.labelSmoothing >= 0) c.model.loss.label_smoothing = f.labelSmoothing;
}

}  // namespace hrapp
