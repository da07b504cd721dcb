#include "cli/commands.h"
#include "cli/output.h"
#include "session/RunText.h"
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

QString q(const std::string& s) { return QString::fromStdString(s); }

std::atomic<hr::Trainer*> g_trainer{nullptr};
void onSignal(int) {
    if (hr::Trainer* t = g_trainer.load()) t->request_stop();
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

int runTrainCommand(const CliRequest& request) {
    CliRequest flags = request;
    hr::TrainConfig& c = flags.config;
    const bool quiet = flags.quiet;
    std::string outDir = flags.out.toStdString();

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
            if (e.message.rfind("device ", 0) == 0) {  // which device trains, and why
                print(QStringLiteral("%1\n").arg(q(e.message)));
                return;
            }
            eprint(QStringLiteral("%1\n").arg(q(e.message)));
        };
        // run history (SQLite) and telemetry samples, written from this (the main) thread
        if (!flags.noHistory) {
            store = std::make_unique<RunStore>();
            if (!store->open(flags.db)) {
                eprint(QCoreApplication::translate("Cli", "headroom train: the run history is not available (%1); continuing without it\n")
                           .arg(store->lastError()));
                store.reset();
            } else {
                runId = store->beginRun(c, flags.name);
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
        print((categoryTable(predicted.device, &result.ledger.peak,
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

}  // namespace hrapp
