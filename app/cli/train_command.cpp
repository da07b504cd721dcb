#include "cli/train_command.h"
#include "cli/plan_command.h"
#include "cli/run_flags.h"
#include "plan/planner.h"
#include "train/device.h"

#include <unistd.h>

#include <QCoreApplication>
#include <atomic>
#include <chrono>
#include <cmath>
#include <csignal>
#include <cstdio>
#include <filesystem>
#include <functional>
#include <map>
#include <thread>

#include "backend/cpu/cpu_backend.h"
#ifdef HEADROOM_WITH_CUDA
#include "backend/cuda/cuda_backend.h"
#endif
#include "base/error.h"
#include "data/dataset.h"
#include "memory/allocator.h"
#include "nn/model_spec.h"
#include "store/run_store.h"
#include "telemetry/sampler.h"
#include "telemetry/nvml_source.h"
#include <mutex>
#include "train/run_record.h"
#include "train/trainer.h"

namespace hrapp {

namespace {

void print(const QString& s) {
    std::fputs(s.toLocal8Bit().constData(), stdout);
    std::fflush(stdout);
}
void eprint(const QString& s) { std::fputs(s.toLocal8Bit().constData(), stderr); }
QString q(const std::string& s) { return QString::fromStdString(s); }

QString trainHelp() {
    return QCoreApplication::translate("Cli", "Usage: headroom train [options]\n"
              "\n"
              "Trains a model headless and writes DIR/run.json (config, per-epoch metrics, final metrics, memory\n"
              "ledger peaks per category; see docs/run-json.md) and DIR/model.safetensors (PyTorch state_dict names).\n"
              "The last line printed is test_accuracy=0.xxxx.\n"
              "\n"
              "Model (one of):\n"
              "  --preset NAME             built-in model: seed-cnn (default), mlp, lenet5, resnet-mini\n"
              "  --model FILE.json         a model spec (docs/model-spec.md)\n"
              "Data:\n"
              "  --data SPEC               fashion-mnist (default), mnist, idx:DIR, synthetic\n"
              "  --train-limit N           use only the first N training samples (0: all)\n"
              "  --test-limit N            use only the first N test samples (0: all)\n"
              "Length:\n"
              "  --epochs N                passes over the training set (default 1)\n"
              "  --steps N                 train exactly N steps instead (evaluates at the end)\n"
              "  --batch N                 samples per step (default 64)\n"
              "Optimizer:\n"
              "  --optimizer NAME          sgd (default), adam, adamw\n"
              "  --lr F                    learning rate (default 0.01 for sgd, 0.001 for adam/adamw)\n"
              "  --momentum F              SGD momentum (default 0)\n"
              "  --nesterov                SGD with Nesterov momentum\n"
              "  --weight-decay F          L2 (sgd, adam) or decoupled (adamw) weight decay (default 0)\n"
              "  --schedule KIND           constant (default), step, cosine\n"
              "  --warmup N                linear warm-up steps (default 0)\n"
              "  --step-size N             step schedule: steps between decays (default 1000)\n"
              "  --gamma F                 step schedule: decay factor (default 0.1)\n"
              "  --min-lr F                cosine schedule: final learning rate (default 0)\n"
              "  --label-smoothing F       cross-entropy label smoothing in [0, 1)\n"
              "Memory strategies (see headroom plan):\n"
              "  --precision P             fp32 (default), tf32, bf16, fp16 (mixed precision, f32 master weights;\n"
              "                            fp16 with dynamic loss scaling)\n"
              "  --checkpoint C            activation checkpointing: none, all, every:K, list:I,J, auto\n"
              "  --micro-batch N           forward/backward N samples at a time, accumulating gradients\n"
              "  --accumulate N            or: split each batch into N micro-batches\n"
              "  --offload-optimizer       optimizer state and master weights in host memory\n"
              "  --memory-limit SIZE       cap the device memory (e.g. 4GiB), like a smaller card\n"
              "Run:\n"
              "  --seed N                  seed for initialisation, shuffling and dropout (default 1)\n"
              "  --device DEV              auto, cpu (default), cuda:N\n"
              "  --threads N               CPU threads (default: all cores)\n"
              "  --out DIR                 output folder (default runs/run-YYYYMMDD-HHMMSS)\n"
              "  --name NAME               name of the run in the history (default: model and time)\n"
              "  --db FILE                 run history database (default: the user's data folder)\n"
              "  --no-history              do not record the run in the history\n"
              "  --quiet                   only the final line\n"
              "  --help                    this help\n");
}

std::atomic<hr::Trainer*> g_trainer{nullptr};
void onSignal(int) {
    if (hr::Trainer* t = g_trainer.load()) t->request_stop();
}

QString formatDuration(double s) {
    if (!std::isfinite(s) || s < 0) return QStringLiteral("--:--");
    long long t = static_cast<long long>(s + 0.5);
    if (t >= 3600) return QStringLiteral("%1:%2:%3").arg(t / 3600).arg(t / 60 % 60, 2, 10, QChar('0')).arg(t % 60, 2, 10, QChar('0'));
    return QStringLiteral("%1:%2").arg(t / 60, 2, 10, QChar('0')).arg(t % 60, 2, 10, QChar('0'));
}

// The nearest existing ancestor of `dir` must be a folder we can create files in (checked before
// training by creating and removing a probe file, so a bad --out fails at once and nothing is left).
bool canCreateFilesIn(const std::filesystem::path& folder) {
    std::string probe = (folder / ".headroom-write-test-XXXXXX").string();
    int fd = ::mkstemp(probe.data());
    if (fd < 0) return false;
    ::close(fd);
    ::unlink(probe.c_str());
    return true;
}

void checkOutputDir(const std::filesystem::path& dir) {
    namespace fs = std::filesystem;
    std::error_code ec;
    if (fs::exists(dir, ec)) {
        if (!fs::is_directory(dir, ec))
            throw BadFlag{QCoreApplication::translate("Cli", "--out %1 is a file, not a folder; pass a folder path").arg(q(dir.string()))};
        if (!canCreateFilesIn(dir))
            throw BadFlag{QCoreApplication::translate("Cli", "--out %1 is not writable; pick a folder you can write to").arg(q(dir.string()))};
        return;
    }
    fs::path p = fs::absolute(dir, ec).parent_path();
    while (!p.empty() && !fs::exists(p, ec)) p = p.parent_path();
    if (p.empty() || !fs::is_directory(p, ec) || !canCreateFilesIn(p))
        throw BadFlag{QCoreApplication::translate("Cli", "--out %1 cannot be created: %2 is not a writable folder").arg(q(dir.string()), q(p.string()))};
}

}  // namespace

int run_train_command(const std::vector<std::string>& args) {
    RunFlags flags;
    try {
        flags = parseRunFlags(args, "train");
    } catch (const BadFlag& e) {
        eprint(QCoreApplication::translate("Cli", "headroom train: %1\n").arg(e.message));
        return 2;
    }
    if (flags.help) {
        print(trainHelp());
        return 0;
    }
    hr::TrainConfig& c = flags.config;
    const bool quiet = flags.quiet;
    std::string& outDir = flags.outDir;

    namespace fs = std::filesystem;
    std::unique_ptr<hr::Trainer> trainer;
    hr::TrainResult result;
    std::unique_ptr<RunStore> store;
    qint64 runId = -1;
    std::unique_ptr<hr::TelemetrySampler> sampler;
    std::mutex telemetryMutex;
    std::vector<hr::TelemetrySample> telemetry;
    auto drainTelemetry = [&] {
        std::vector<hr::TelemetrySample> batch;
        {
            std::lock_guard<std::mutex> lock(telemetryMutex);
            batch.swap(telemetry);
        }
        for (const auto& t : batch) store->addTelemetry(runId, t);
    };
    // Ends the history record of this run whatever happens.
    auto finishHistory = [&](const QString& status, const QString& error) {
        if (sampler) sampler->stop();
        if (!store) return;
        drainTelemetry();
        if (status.isEmpty())
            store->finishRun(runId, result);
        else
            store->finishRun(runId, status, error);
        store->flush();
    };
    try {
        resolveModel(flags);
        if (outDir.empty()) {
            char buf[64];
            std::time_t t = std::time(nullptr);
            std::strftime(buf, sizeof buf, "runs/run-%Y%m%d-%H%M%S", std::localtime(&t));
            outDir = buf;
        }
        checkOutputDir(outDir);
        hr::validate_train_config(c);
        hr::validate_model_spec(c.model);

        const bool tty = ::isatty(STDOUT_FILENO) != 0;
        auto lastPrint = std::chrono::steady_clock::now() - std::chrono::seconds(1);
        hr::TrainCallbacks cb;
        cb.on_step = [&](const hr::StepEvent& e) {
            if (quiet || !tty) return;
            auto now = std::chrono::steady_clock::now();
            if (e.step != e.total_steps && now - lastPrint < std::chrono::milliseconds(100)) return;
            lastPrint = now;
            const int width = 24;
            int filled = static_cast<int>(width * static_cast<double>(e.step) / static_cast<double>(e.total_steps));
            QString bar = QString(filled, QChar('#')) + QString(width - filled, QChar('-'));
            print(QCoreApplication::translate("Cli", "\r[%1] step %2/%3  epoch %4  loss %5  %6 img/s  ETA %7 ")
                      .arg(bar)
                      .arg(e.step)
                      .arg(e.total_steps)
                      .arg(e.epoch)
                      .arg(e.loss, 0, 'f', 4)
                      .arg(e.images_per_second, 0, 'f', 0)
                      .arg(formatDuration(e.eta_seconds)));
        };
        cb.on_epoch = [&](const hr::EpochEvent& e) {
            if (quiet) return;
            if (tty) print(QStringLiteral("\n"));
            print(QCoreApplication::translate("Cli", "epoch %1: train_loss=%2 train_accuracy=%3 test_loss=%4 test_accuracy=%5 images/s=%6 "
                     "time=%7s\n")
                      .arg(e.epoch)
                      .arg(e.train_loss, 0, 'f', 4)
                      .arg(e.train_accuracy, 0, 'f', 4)
                      .arg(e.test_loss, 0, 'f', 4)
                      .arg(e.test_accuracy, 0, 'f', 4)
                      .arg(e.images_per_second, 0, 'f', 0)
                      .arg(e.seconds, 0, 'f', 1));
        };
        cb.on_log = [&](const hr::LogEvent& e) {
            if (quiet || e.level == hr::LogLevel::error) return;  // failures are printed once, at the end
            if (e.level == hr::LogLevel::info && e.message.rfind("epoch ", 0) == 0) return;  // printed above
            eprint(QStringLiteral("%1\n").arg(q(e.message)));
        };
        // run history (SQLite) and telemetry samples, written from this (the main) thread
        if (!flags.noHistory) {
            store = std::make_unique<RunStore>();
            if (!store->open(QString::fromStdString(flags.dbPath))) {
                eprint(QCoreApplication::translate("Cli", "headroom train: the run history is not available (%1); continuing without it\n")
                           .arg(store->lastError()));
                store.reset();
            } else {
                runId = store->beginRun(c, QString::fromStdString(flags.runName));
            }
        }
        if (store) {
            auto userStep = cb.on_step;
            cb.on_step = [&, userStep](const hr::StepEvent& e) {
                if (userStep) userStep(e);
                store->addStep(runId, e);
                if (sampler) sampler->set_current_step(e.step);
                drainTelemetry();
            };
            auto userEpoch = cb.on_epoch;
            cb.on_epoch = [&, userEpoch](const hr::EpochEvent& e) {
                if (userEpoch) userEpoch(e);
                store->addEpoch(runId, e);
            };
            cb.on_memory = [&](const hr::MemoryEvent& e) { store->addMemory(runId, e); };
            sampler = std::make_unique<hr::TelemetrySampler>(hr::make_default_gpu_source(),
                                                             [&](const hr::TelemetrySample& t) {
                                                                 std::lock_guard<std::mutex> lock(telemetryMutex);
                                                                 telemetry.push_back(t);
                                                             });
            sampler->start();
        }
        trainer = std::make_unique<hr::Trainer>(c, cb);
        g_trainer = trainer.get();
        std::signal(SIGINT, onSignal);
        std::signal(SIGTERM, onSignal);
        result = trainer->run();
        g_trainer = nullptr;
        std::signal(SIGINT, SIG_DFL);
        std::signal(SIGTERM, SIG_DFL);
    } catch (const BadFlag& e) {
        eprint(QCoreApplication::translate("Cli", "headroom train: %1\n").arg(e.message));
        return 2;
    } catch (const hr::InputError& e) {
        g_trainer = nullptr;
        if (store) {  // bad input found before training: the run leaves no trace in the history
            if (sampler) sampler->stop();
            store->deleteRun(runId);
        }
        eprint(QCoreApplication::translate("Cli", "headroom train: %1\n").arg(q(e.what())));
        return 2;
    } catch (const std::exception& e) {
        g_trainer = nullptr;
        finishHistory(QStringLiteral("failed"), q(e.what()));
        eprint(QCoreApplication::translate("Cli", "headroom train: %1\n").arg(q(e.what())));
        return 1;
    }
    finishHistory(QString(), QString());

    if (result.status == "failed") {
        eprint(QCoreApplication::translate("Cli", "headroom train: %1\n").arg(q(result.error)));
        if (result.out_of_memory) {
            // the planner's fastest configuration that fits, as flags
            hr::PlanSearch s =
                hr::search_plans(hr::plan_request(c, result.train_samples, result.test_samples), result.oom_limit);
            if (s.best >= 0) {
                const auto& best = s.candidates[static_cast<std::size_t>(s.best)];
                eprint(QCoreApplication::translate("Cli", "headroom train: this fits in %1 (predicted %2): --batch %3 %4\n")
                           .arg(q(hr::format_bytes(result.oom_limit)), q(hr::format_bytes(best.plan.device_total)))
                           .arg(c.batch)
                           .arg(q(hr::strategy_flags(best.strategy))));
            } else {
                eprint(QCoreApplication::translate("Cli", "headroom train: no strategy fits in %1 at batch %2; lower --batch\n")
                           .arg(q(hr::format_bytes(result.oom_limit)))
                           .arg(c.batch));
            }
        }
        return result.bad_input || result.out_of_memory ? 2 : 1;
    }
    // predicted against measured, category by category
    hr::MemoryPlan predicted;
    {
        predicted = hr::predict_memory(hr::plan_request(c, result.train_samples, result.test_samples));
        if (store) store->setPredictedMemory(runId, predicted.device);
    }
    try {
        fs::create_directories(outDir);
        nlohmann::json record = hr::make_run_record(c, result);
        record["memory"]["predicted"] = hr::plan_to_json(predicted);
        std::string text = record.dump(2) + "\n";
        trainer->save_weights((fs::path(outDir) / "model.safetensors").string());
        hr::write_file_atomic((fs::path(outDir) / "run.json").string(), text);
    } catch (const std::exception& e) {
        eprint(QCoreApplication::translate("Cli", "headroom train: could not write the results to %1: %2\n").arg(q(outDir), q(e.what())));
        return 1;
    }
    if (!quiet) {
        print(QCoreApplication::translate("Cli", "memory (%1), predicted before the run and measured by the ledger:\n").arg(q(result.strategy)));
        print(q(categoryTable(predicted.device, &result.ledger.peak,
                              result.host_ledger.peak_total ? &result.host_ledger.peak : nullptr)));
        print(QCoreApplication::translate("Cli", "wrote %1 and %2\n")
                  .arg(q((fs::path(outDir) / "run.json").string()), q((fs::path(outDir) / "model.safetensors").string())));
        if (store) print(QCoreApplication::translate("Cli", "recorded as run %1 in %2 (headroom report %1)\n").arg(runId).arg(store->path()));
    }
    if (result.status == "stopped") {
        eprint(QCoreApplication::translate("Cli", "headroom train: stopped after %1 steps; the results so far were written\n").arg(result.steps));
        print(QStringLiteral("test_accuracy=%1\n").arg(result.test_accuracy, 0, 'f', 4));
        return 1;
    }
    print(QStringLiteral("test_accuracy=%1\n").arg(result.test_accuracy, 0, 'f', 4));
    return 0;
}

int run_presets_command(const std::vector<std::string>& args) {
    // `headroom presets --json NAME`: the preset's model spec as JSON (docs/model-spec.md), for tools
    // such as bench/torch_reference.py that build the same model elsewhere.
    if (args.size() == 2 && args[0] == "--json") {
        try {
            print(q(hr::model_spec_to_json(hr::preset_model(args[1])).dump(2)) + QStringLiteral("\n"));
            return 0;
        } catch (const hr::InputError& e) {
            eprint(q(e.what()) + QStringLiteral("\n"));
            return 2;
        }
    }
    if (!args.empty() && args[0] != "--help") {
        eprint(QCoreApplication::translate("Cli", "headroom presets: takes no options\n"));
        return 2;
    }
    for (const auto& name : hr::preset_names()) {
        hr::SpecReport r = hr::analyze_model_spec(hr::preset_model(name));
        print(QStringLiteral("%1  %2 %3\n    %4\n")
                  .arg(q(name), -12)
                  .arg(r.total_params)
                  .arg(QCoreApplication::translate("Cli", "parameters"))
                  .arg(q(hr::preset_description(name))));
    }
    return 0;
}

int run_devices_command(const std::vector<std::string>& args) {
    if (!args.empty() && args[0] != "--help") {
        eprint(QCoreApplication::translate("Cli", "headroom devices: takes no options\n"));
        return 2;
    }
    long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGE_SIZE);
    print(QCoreApplication::translate("Cli", "cpu      %1 cores, %2 memory\n")
              .arg(std::thread::hardware_concurrency())
              .arg(q(hr::format_bytes(static_cast<std::size_t>(pages) * static_cast<std::size_t>(page)))));
#ifdef HEADROOM_WITH_CUDA
    const auto gpus = hr::cuda_devices();
    if (gpus.empty()) {
        print(QCoreApplication::translate("Cli", "cuda     none: %1\n").arg(q(hr::cuda_unavailable_reason())));
    } else {
        for (const auto& d : gpus)
            print(QCoreApplication::translate("Cli", "cuda:%1   %2, %3 memory (%4 free), compute capability %5.%6\n")
                      .arg(d.index)
                      .arg(q(d.name), q(hr::format_bytes(d.total_bytes)), q(hr::format_bytes(d.free_bytes)))
                      .arg(d.cc_major)
                      .arg(d.cc_minor));
    }
    print(QCoreApplication::translate("Cli", "versions %1\n").arg(q(hr::cuda_versions())));
#else
    print(QCoreApplication::translate("Cli", "cuda     not available: this build has no CUDA backend (built without nvcc)\n"));
#endif
    return 0;
}

}  // namespace hrapp
