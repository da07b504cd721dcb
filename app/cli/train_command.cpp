// `headroom train`: one run through the RunController (the window's lifecycle), printed for a terminal.
#include <netdb.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>

#include <QCoreApplication>
#include <QDateTime>
#include <QDir>
#include <QElapsedTimer>
#include <QFile>
#include <QFileInfo>
#include <QEventLoop>
#include <QProcess>
#include <QStandardPaths>
#include <QSysInfo>
#include <QTimer>

#include <functional>
#include <csignal>
#include <cstdio>
#include <signal.h>
#include <chrono>
#include <ctime>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <vector>

#include "backend/cuda/cuda_backend.h"
#include "base/error.h"
#include "dist/communicator.h"
#include "data/table.h"
#include "strategy/rank_layout.h"
#include "train/trainer.h"
#include "cli/commands.h"
#include "cli/output.h"
#include "cli/rank_events.h"
#include "cli/timeline_output.h"
#include "cli/rank_job.h"
#include "cli/signal_watcher.h"
#include "memory/allocator.h"
#include "nn/transformer_spec.h"
#include "notify/webhook_notifier.h"
#include "session/RunController.h"
#include "session/RunDefaults.h"
#include "session/RunText.h"
#include "store/run_store.h"
#include "telemetry/nvml_source.h"
#include "telemetry/sampler.h"
#include "train/resume.h"

namespace hrapp {

namespace {


// Prints a run's events as they come: which device (the first line), a progress bar on a terminal,
// one line per epoch, the trainer's notes on stderr; then the outcome.
class TrainPrinter {
public:
    TrainPrinter(RunController& c, bool quiet) : m_quiet(quiet), m_tty(::isatty(STDOUT_FILENO) != 0) {
        QObject::connect(&c, &RunController::deviceChosen, &c, [this](const hr::DeviceEvent& e) { onDevice(e); });
        QObject::connect(&c, &RunController::stepsReady, &c, [this](const QVector<hr::StepEvent>& s) { onSteps(s); });
        QObject::connect(&c, &RunController::epochFinished, &c, [this](const hr::EpochEvent& e) { onEpoch(e); });
        QObject::connect(&c, &RunController::logMessage, &c, [this](const hr::LogEvent& e) { onLog(e); });
    }
    void setDeviceFlag(const std::string& device) { m_deviceFlag = device; }
    void setLanguageModel(bool tokens) { m_tokens = tokens; }
    void setTable(bool table) { m_table = table; }  // a table's samples are rows, not images

    void onDevice(const hr::DeviceEvent& e) {
        m_deviceNote = e.note;
        if (!m_quiet) {
            if (e.note.empty())
                print(Cli::tr("device: %1 (--device %2)\n").arg(q(e.name), q(m_deviceFlag)));
            else
                print(Cli::tr("device: %1; %2\n").arg(q(e.name), hrapp::messageText(e.text)));
        }
        m_deviceShown = true;
        for (const QString& line : m_held) eprint(line);
        m_held.clear();
    }

    void onSteps(const QVector<hr::StepEvent>& steps) {
        if (m_quiet || !m_tty || steps.isEmpty()) return;
        const hr::StepEvent& e = steps.last();
        const auto now = std::chrono::steady_clock::now();
        if (e.step != e.total_steps && now - m_lastBar < std::chrono::milliseconds(100)) return;
        m_lastBar = now;
        const int width = 24;
        const int filled = static_cast<int>(width * static_cast<double>(e.step) / static_cast<double>(e.total_steps));
        const QString bar = QString(filled, QLatin1Char('#')) + QString(width - filled, QLatin1Char('-'));
        if (m_tokens) {
            print(Cli::tr("\r[%1] step %2/%3  epoch %4  loss %5  %6 tokens/s  ETA %7 ")
                      .arg(bar)
                      .arg(e.step)
                      .arg(e.total_steps)
                      .arg(e.epoch)
                      .arg(e.loss, 0, 'f', 4)
                      .arg(e.tokens_per_second, 0, 'f', 0)
                      .arg(formatDuration(e.eta_seconds)));
            m_barShown = true;
            return;
        }
        print((m_table ? Cli::tr("\r[%1] step %2/%3  epoch %4  loss %5  %6 rows/s  ETA %7 ")
                       : Cli::tr("\r[%1] step %2/%3  epoch %4  loss %5  %6 img/s  ETA %7 "))
                  .arg(bar)
                  .arg(e.step)
                  .arg(e.total_steps)
                  .arg(e.epoch)
                  .arg(e.loss, 0, 'f', 4)
                  .arg(e.images_per_second, 0, 'f', 0)
                  .arg(formatDuration(e.eta_seconds)));
        m_barShown = true;
    }

    void onEpoch(const hr::EpochEvent& e) {
        if (m_quiet) return;
        endBar();
        if (m_tokens) {  // a language model: the loss per token and tokens/s (accuracy: next-token)
            print(Cli::tr("epoch %1: train_loss=%2 test_loss=%3 test_accuracy=%4 tokens/s=%5 time=%6s\n")
                      .arg(e.epoch)
                      .arg(e.train_loss, 0, 'f', 4)
                      .arg(e.test_loss, 0, 'f', 4)
                      .arg(e.test_accuracy, 0, 'f', 4)
                      .arg(e.tokens_per_second, 0, 'f', 0)
                      .arg(e.seconds, 0, 'f', 1));
            return;
        }
        print((m_table ? Cli::tr("epoch %1: train_loss=%2 train_accuracy=%3 test_loss=%4 test_accuracy=%5 rows/s=%6 time=%7s\n")
                       : Cli::tr("epoch %1: train_loss=%2 train_accuracy=%3 test_loss=%4 test_accuracy=%5 images/s=%6 time=%7s\n"))
                  .arg(e.epoch)
                  .arg(e.train_loss, 0, 'f', 4)
                  .arg(e.train_accuracy, 0, 'f', 4)
                  .arg(e.test_loss, 0, 'f', 4)
                  .arg(e.test_accuracy, 0, 'f', 4)
                  .arg(e.images_per_second, 0, 'f', 0)
                  .arg(e.seconds, 0, 'f', 1));
    }

    void onLog(const hr::LogEvent& e) {
        if (m_quiet || e.level == hr::LogLevel::error || e.level == hr::LogLevel::debug) return;  // failures: once, at the end
        if (e.level == hr::LogLevel::info && e.message.rfind("epoch ", 0) == 0) return;  // printed as a line of its own
        if (!m_deviceNote.empty() && e.message == m_deviceNote) return;                  // in the device line
        endBar();
        const QString line = logText(e) + QLatin1Char('\n');  // in the user's language
        if (m_deviceShown) eprint(line);
        else m_held << line;  // the device line comes first
    }

    // --timeline, --trace FILE: the chosen step's timeline after the memory table
    void setTimeline(bool show, const QString& trace) {
        m_timeline = show;
        m_trace = trace;
    }

    // The outcome, and the exit code.
    int finish(const RunOutcome& o, const RunStore* store) {
        endBar();
        for (const QString& line : m_held) eprint(line);
        m_held.clear();
        const hr::TrainResult& r = o.result();
        const QString error = resultError(r);
        if (r.status == "failed") {
            eprint(Cli::tr("headroom train: %1\n").arg(error));
            if (o.advice) eprint(Cli::tr("headroom train: %1\n").arg(o.advice->summary()));
            return o.exitCode();
        }
        const QString dir = QString::fromStdString(o.ended.outDir);
        if (!o.ended.writeError.empty()) {
            eprint(Cli::tr("headroom train: could not write the results to %1: %2\n").arg(dir, q(o.ended.writeError)));
            return o.exitCode();
        }
        if (!m_quiet) {
            if (o.ended.predicted.valid && r.world_size > 1) {
                // rank 0's plan and ledger (app/session: like with like); every rank's total after the table
                print(Cli::tr("memory of rank 0 (%1), predicted before the run and measured by the ledger:\n").arg(q(r.strategy)));
                print(categoryTable(o.ended.predicted.device, &r.ledger.peak,
                                    r.host_ledger.peak_total ? &r.host_ledger.peak : nullptr));
                QStringList each;
                for (std::size_t k = 0; k < r.rank_peak_bytes.size(); ++k)
                    each << Cli::tr("rank %1 %2 (predicted %3)")
                                .arg(k)
                                .arg(q(hr::format_bytes(r.rank_peak_bytes[k])))
                                .arg(k < o.ended.predicted.rankDeviceTotals.size()
                                         ? q(hr::format_bytes(o.ended.predicted.rankDeviceTotals[k]))
                                         : QStringLiteral("?"));
                print(Cli::tr("every rank's peak: %1\n").arg(each.join(QStringLiteral("; "))));
            } else if (o.ended.predicted.valid) {
                print(Cli::tr("memory (%1), predicted before the run and measured by the ledger:\n").arg(q(r.strategy)));
                print(categoryTable(o.ended.predicted.device, &r.ledger.peak,
                                    r.host_ledger.peak_total ? &r.host_ledger.peak : nullptr));
            } else {
                print(Cli::tr("memory: no prediction (%1); measured peak %2\n")
                          .arg(q(o.ended.predicted.error), q(hr::format_bytes(r.ledger.peak_total))));
            }
            if (o.ended.written.size() == 2)
                print(Cli::tr("wrote %1 and %2\n").arg(q(o.ended.written[0]), q(o.ended.written[1])));
            if (o.runId > 0 && store)
                print(Cli::tr("recorded as run %1 in %2 (headroom report %1)\n").arg(o.runId).arg(store->path()));
        }
        // the chosen step's measured timeline (docs/timeline.md), before the last line
        const hr::StepTimeline& tl = r.step_timeline;
        if (m_timeline && !tl.empty()) print(timelineText(tl));
        if (!m_trace.isEmpty() && !tl.empty()) {
            QString error;
            if (!writeTimelineTrace(m_trace, tl, Cli::tr("measured step %1").arg(tl.step), &error)) {
                eprint(Cli::tr("headroom train: %1\n").arg(error));
                return 2;
            }
            if (!m_quiet) print(Cli::tr("wrote the measured timeline of step %1 to %2\n").arg(tl.step).arg(m_trace));
        }
        if (r.status == "stopped")
            eprint(Cli::tr("headroom train: stopped after %1 steps; the results so far were written\n").arg(r.steps));
        if (m_tokens) {
            // a language model: the throughput, then the validation loss per token as the last line
            if (!m_quiet)
                print(Cli::tr("tokens/s=%1 (%2 %3 tokens, sequence %4)\n")
                          .arg(r.tokens_per_second, 0, 'f', 0)
                          .arg(r.vocab_size)
                          .arg(q(r.tokenizer))
                          .arg(r.seq));
            if (r.what_if.compressed && !m_quiet) {  // --prune/--quantize: the loss per token after (final.compression)
                print(QStringLiteral("test_loss_after=%1\n").arg(r.what_if.test_loss_after, 0, 'f', 4));
                print(QStringLiteral("weights_bytes_after=%1\n")
                          .arg(r.what_if.compression.stored_bytes + r.what_if.compression.other_bytes));
            }
            print(QStringLiteral("test_loss=%1\n").arg(r.test_loss, 0, 'f', 4));
            return o.exitCode();
        }
        if (r.what_if.compressed && !m_quiet) {  // --prune/--quantize: the what-if's figures (run.json final.compression)
            print(QStringLiteral("test_accuracy_after=%1\n").arg(r.what_if.test_accuracy_after, 0, 'f', 4));
            print(QStringLiteral("weights_bytes_after=%1\n")
                      .arg(r.what_if.compression.stored_bytes + r.what_if.compression.other_bytes));
        }
        print(QStringLiteral("test_accuracy=%1\n").arg(r.test_accuracy, 0, 'f', 4));
        return o.exitCode();
    }

private:
    void endBar() {
        if (m_barShown) print(QStringLiteral("\n"));
        m_barShown = false;
    }

    bool m_quiet, m_tty;
    bool m_timeline = false;  // --timeline
    QString m_trace;          // --trace FILE
    bool m_tokens = false;  // a language model
    bool m_table = false;   // csv:/tsv: data
    bool m_barShown = false, m_deviceShown = false;
    std::string m_deviceFlag, m_deviceNote;
    QStringList m_held;
    std::chrono::steady_clock::time_point m_lastBar{};
};

// A configuration file (train_config_to_json, as a run folder's config.json) into *out; "" : fine.
QString readConfigFile(const QString& path, hr::TrainConfig* out) {
    QFile f(path);
    if (!f.open(QIODevice::ReadOnly)) return Cli::tr("cannot read %1: %2").arg(path, f.errorString());
    try {
        *out = hr::train_config_from_json(nlohmann::json::parse(f.readAll().toStdString()));
    } catch (const nlohmann::json::exception& e) {
        return Cli::tr("%1 is not valid JSON (%2)").arg(path, QString::fromUtf8(e.what()));
    } catch (const hr::Error& e) {
        return messageText(e.message());
    }
    return {};
}

// The fields in which two configurations differ, as dotted names ("optimizer.lr", "batch").
void configDifferences(const nlohmann::json& a, const nlohmann::json& b, const std::string& prefix, QStringList& out) {
    if (a.is_object() && b.is_object()) {
        std::set<std::string> keys;
        for (auto it = a.begin(); it != a.end(); ++it) keys.insert(it.key());
        for (auto it = b.begin(); it != b.end(); ++it) keys.insert(it.key());
        for (const std::string& k : keys) {
            const std::string name = prefix.empty() ? k : prefix + "." + k;
            if (!a.contains(k) || !b.contains(k)) out << QString::fromStdString(name);
            else if (a[k] != b[k]) configDifferences(a[k], b[k], name, out);
        }
        return;
    }
    if (a != b) out << QString::fromStdString(prefix);
}

// --resume DIR: the run's own configuration (DIR/config.json) with only its length, threads, device,
// checkpoint interval, number of ranks and sharding stage taken from the command line (a checkpoint is
// the same on any number of ranks and stage); any other run flag is refused.
// --resume DIR --config FILE (the window's Continue of a multi-rank run): FILE is the continued
// configuration as a whole (RunController::continuedConfig, with those fields set); it must be the run's own
// in everything else. "" : fine.
QString resumeConfig(CliRequest& r) {
    const bool file = !r.configFile.isEmpty();
    static const QStringList allowed = {"resume", "steps", "epochs", "threads", "device", "save-every",
                                        "db", "no-history", "name", "quiet", "notify", "pause-file", "ranks", "shard",
                                        "tp-head", "pipeline", "pipeline-split", "offload-params", "hosts"};
    static const QStringList allowedWithFile = {"resume", "config", "db", "no-history", "name", "quiet", "notify",
                                                "pause-file", "ranks", "hosts"};
    QStringList refused;
    for (const QString& f : r.given)
        if (!(file ? allowedWithFile : allowed).contains(f)) refused << QStringLiteral("--") + f;
    refused.sort();
    if (!refused.isEmpty() && file)
        return Cli::tr("--resume %1 --config %2: the file is the continued configuration as a whole; only --ranks, "
                       "--name, --db, --no-history, --quiet, --notify and --pause-file may be added, not %3")
            .arg(r.resume, r.configFile, refused.join(QStringLiteral(", ")));
    if (!refused.isEmpty())
        return Cli::tr("--resume continues a run with its own configuration; only --steps, --epochs, --threads, "
                       "--device, --save-every, --ranks, --shard, --tp-head, --pipeline, --pipeline-split and --offload-params may change, not %1. Start a new run (--init-from %2/model.safetensors "
                       "takes its weights) to change the rest")
            .arg(refused.join(QStringLiteral(", ")), r.resume);
    hr::TrainConfig given;  // --config: the continued configuration
    if (file)
        if (const QString why = readConfigFile(r.configFile, &given); !why.isEmpty()) return why;
    QString error;
    const std::optional<ContinuePoint> point = RunController::continuePoint(r.resume, &error);
    if (!point) return error;
    // on another number of ranks (--ranks M, or mpirun -np M) the batch is split evenly
    const hr::RankEnvironment env = hr::rank_environment();
    const int world = env.launched ? env.world_size : std::max(1, r.ranks);
    if (file) {
        // the length and the rest Continue may change from the file, then the file must be the run's own
        hr::TrainConfig c = RunController::continuedConfig(*point, given.steps, given.steps > 0 ? 0 : given.epochs, world);
        c.threads = given.threads;
        c.device = given.device;
        c.strategy.shard = given.strategy.shard;
        c.save_every_steps = given.save_every_steps;
        c.save_every_seconds = given.save_every_seconds;
        QStringList changed;
        configDifferences(hr::train_config_to_json(c), hr::train_config_to_json(given), "", changed);
        if (!changed.isEmpty())
            return Cli::tr("%1 changes %2 of the run in %3; a continued run keeps its own configuration except its "
                           "length, threads, device, checkpoint interval and sharding stage. Start a new run "
                           "(--init-from %3/model.safetensors takes its weights) to change the rest")
                .arg(r.configFile, changed.join(QStringLiteral(", ")), r.resume);
        r.config = c;
        return {};
    }
    // the length and the rest the Runs tab's Continue sets too, then what only the command line changes
    hr::TrainConfig c = RunController::continuedConfig(*point, r.has("steps") ? r.config.steps : 0,
                                                       r.has("epochs") && !r.has("steps") ? r.config.epochs : 0, world);
    if (r.has("threads")) c.threads = r.config.threads;
    if (r.has("device")) c.device = r.config.device;
    // the layout over the new number of ranks: what was asked, the rest as the checkpoint allows (core's policy)
    hr::RelayoutAsked asked;
    asked.shard = r.has("shard");
    asked.tp_head = r.has("tp-head");
    asked.pipeline = r.has("pipeline");
    asked.pipeline_split = r.has("pipeline-split");
    asked.offload_parameters = r.has("offload-params");
    hr::relayout_for_resume(c.strategy, r.config.strategy, asked, world);
    if (r.has("save-every")) {
        c.save_every_steps = r.config.save_every_steps;
        c.save_every_seconds = r.config.save_every_seconds;
    }
    r.config = c;
    return {};
}

// --config FILE.json: the whole configuration from FILE (train_config_to_json, as a run folder's
// config.json; the window's multi-rank runs start this way), with only where the run goes and how it is
// launched taken from the command line; any other run flag is refused. "" : fine.
QString configFromFile(CliRequest& r) {
    static const QStringList allowed = {"config", "ranks", "hosts", "out", "name", "db", "no-history", "quiet", "notify", "pause-file"};
    QStringList refused;
    for (const QString& f : r.given)
        if (!allowed.contains(f)) refused << QStringLiteral("--") + f;
    refused.sort();
    if (!refused.isEmpty())
        return Cli::tr("--config %1 holds the whole configuration; only --ranks, --out, --name, --db, --no-history, "
                       "--quiet, --notify and --pause-file may be added, not %2")
            .arg(r.configFile, refused.join(QStringLiteral(", ")));
    return readConfigFile(r.configFile, &r.config);
}

// HEADROOM_EVENTS_ADDR=HOST:PORT (a socket: the window's runs) or HEADROOM_EVENTS_DIR=DIR (docs/distributed.md,
// "Events for other programs"): every rank sends its run's events over its own connection to that socket
// (or writes them to DIR/rank<R>.jsonl), one JSON object per line (session/RunEvent.h's runEventToJson,
// plus "rank"), line by line, so a watching program (the window's multi-rank runs) reads whole lines:
// rank 0 every event; the other ranks their memory (the ledger), their warnings and errors, and their end.
// Every rank also writes its telemetry (RankTelemetry) every HEADROOM_EVENTS_TELEMETRY_MS (default 500,
// 100..10000): its resident memory and its GPU's NVML index; the machine's lowest local rank also its
// machine's CPU, RAM and GPUs. The watcher may be on another machine, or see other GPUs than the ranks.
class EventStream {
public:
    // To the parent's socket at `address` (HOST:PORT, HEADROOM_EVENTS_ADDR) when given, else to the file
    // DIR/rank<R>.jsonl (HEADROOM_EVENTS_DIR). The same lines either way, one serialiser (runEventToJson).
    EventStream(RunController& c, const QString& dir, const QString& address, int rank, bool reportsMachine)
        : m_rank(rank), m_machine(reportsMachine) {
        if (!address.isEmpty()) {
            m_socket = connectRankEventsUpstream(address);
            if (m_socket < 0) {
                eprint(Cli::tr("headroom train: rank %1 cannot reach its parent at %2 (HEADROOM_EVENTS_ADDR); its events are "
                               "not sent\n")
                           .arg(rank)
                           .arg(address));
                return;
            }
        } else {
            QDir().mkpath(dir);
            const QString path = QDir(dir).filePath(QStringLiteral("rank%1.jsonl").arg(rank));
            m_file = std::fopen(QFile::encodeName(path).constData(), "a");
            if (!m_file) return;
        }
        const bool all = rank == 0;
        QObject::connect(&c, &RunController::deviceChosen, &c, [this, all](const hr::DeviceEvent& e) {
            setDevice(e.device);
            if (all) write(e);
        });
        if (all) {
            QObject::connect(&c, &RunController::epochFinished, &c, [this](const hr::EpochEvent& e) { write(e); });
            QObject::connect(&c, &RunController::evaluated, &c, [this](const hr::EvalEvent& e) { write(e); });
        }
        QObject::connect(&c, &RunController::stepsReady, &c, [this, all](const QVector<hr::StepEvent>& s) {
            if (m_sampler && !s.isEmpty()) m_sampler->set_current_step(s.last().step);
            if (all)
                for (const hr::StepEvent& e : s) write(e);
        });
        QObject::connect(&c, &RunController::memoryUpdated, &c, [this](const hr::MemoryEvent& e) {
            hr::MemoryEvent m = e;
            m.rank = m_rank;
            write(m);
        });
        QObject::connect(&c, &RunController::logMessage, &c, [this, all](const hr::LogEvent& e) {
            if (all || e.level == hr::LogLevel::warning || e.level == hr::LogLevel::error) write(e);
        });
        QObject::connect(&c, &RunController::runFinished, &c, [this](const RunOutcome& o) {
            if (m_sampler) m_sampler->stop();  // the last telemetry before the end, none after it
            write(o.ended);
        });
        m_host = QSysInfo::machineHostName().toStdString();
        m_pid = QCoreApplication::applicationPid();
        const int ms = hr::TelemetrySampler::clamp_interval_ms(
            qEnvironmentVariableIsSet("HEADROOM_EVENTS_TELEMETRY_MS") ? qEnvironmentVariableIntValue("HEADROOM_EVENTS_TELEMETRY_MS")
                                                                      : hr::TelemetrySampler::kDefaultIntervalMs);
        // The machine's GPUs are sampled by its reporter only; the other ranks read NVML once, to place
        // their device (setDevice). On the sampler's thread: a line of its own, under the file's lock.
        if (m_machine) m_gpus = hr::make_default_gpu_source();
        m_sampler = std::make_unique<hr::TelemetrySampler>(
            m_gpus, [this](const hr::TelemetrySample& s) { writeTelemetry(s); }, ms);
        m_sampler->start();
    }
    ~EventStream() {
        m_sampler.reset();  // joins its thread: no line after the file is closed
        if (m_file) std::fclose(m_file);
        if (m_socket >= 0) ::close(m_socket);
    }
    EventStream(const EventStream&) = delete;
    EventStream& operator=(const EventStream&) = delete;

private:
    void write(const RunEvent& e) {
        nlohmann::json j = runEventToJson(e);
        j["rank"] = m_rank;
        const std::string line = j.dump() + "\n";
        std::lock_guard lock(m_mutex);
        if (m_socket >= 0) {
            if (!sendAllRankEvents(m_socket, line)) {  // the parent is gone: training goes on, unheard
                ::close(m_socket);
                m_socket = -1;
            }
            return;
        }
        if (!m_file) return;
        std::fwrite(line.data(), 1, line.size(), m_file);
        std::fflush(m_file);
    }
    // "cuda:K": its NVML index, found by the PCI address CUDA gives for it (NVML's order need not be
    // CUDA's: CUDA_VISIBLE_DEVICES, fastest-first enumeration)
    void setDevice(const std::string& device) {
        int gpu = -1;
        hr::CudaDeviceInfo info;
        if (device.rfind("cuda:", 0) == 0 && hr::cuda_device_properties(std::atoi(device.c_str() + 5), info)) {
            const std::shared_ptr<hr::GpuTelemetrySource> nvml = m_gpus ? m_gpus : hr::make_default_gpu_source();
            gpu = hr::gpu_index_of_bus_id(nvml->sample(), info.pci_bus_id);
        }
        std::lock_guard lock(m_mutex);
        m_device = device;
        m_gpu = gpu;
    }
    void writeTelemetry(const hr::TelemetrySample& s) {
        RankTelemetry t;
        t.rank = m_rank;
        t.host = m_host;
        t.pid = m_pid;
        t.machine = m_machine;
        t.sample = s;
        t.progress = hr::rank_progress();  // the heartbeat the launcher watches (cli/rank_events.h)
        {
            std::lock_guard lock(m_mutex);
            t.device = m_device;
            t.gpu = m_gpu;
        }
        if (!m_machine) {  // the machine's figures are its reporter's: this rank's own process only
            t.sample.host.cpu_utilization = hr::kTelemetryNaN;
            t.sample.host.ram_used = t.sample.host.ram_total = -1;
        }
        write(t);
    }

    int m_rank;
    bool m_machine;
    std::string m_host;
    long long m_pid = 0;
    std::mutex m_mutex;  // the file, the device
    std::FILE* m_file = nullptr;
    int m_socket = -1;  // the parent's TCP connection, when it gave one
    std::string m_device;
    int m_gpu = -1;
    std::shared_ptr<hr::GpuTelemetrySource> m_gpus;  // NVML, on the machine's reporter
    std::unique_ptr<hr::TelemetrySampler> m_sampler;
};

QString defaultOutDir() { return newRunFolder(QStringLiteral("runs")); }  // session/RunDefaults.h

// The launcher's signals (SIGINT, SIGTERM), counted; launchRanks() acts on them between its waits.
volatile std::sig_atomic_t g_launcherSignals = 0;
extern "C" void onLauncherSignal(int) { g_launcherSignals = g_launcherSignals + 1; }

// Seconds the launcher gives the ranks at each stage of ending a job: to stop after the current step once
// asked, then to end after SIGTERM before SIGKILL (HEADROOM_STOP_GRACE, docs/environment.md; default 30).
double stopGraceSeconds() {
    bool ok = false;
    const double v = qEnvironmentVariable("HEADROOM_STOP_GRACE").toDouble(&ok);
    return ok && v > 0 ? v : 30.0;
}

QString seconds(double s) { return QString::number(s, 'g', 3); }

// The ranks the heartbeats named, for a person: "rank 1 (on HOST) stopped making progress in step 7: ...".
QString stallText(const std::vector<RankEvents::Stall>& stalls) {
    QStringList each;
    for (const RankEvents::Stall& s : stalls) {
        const QString who = s.host.empty() ? Cli::tr("rank %1").arg(s.rank)
                                           : Cli::tr("rank %1 (on %2)").arg(s.rank).arg(QString::fromStdString(s.host));
        const QString when = s.step > 0 ? Cli::tr("in step %1").arg(s.step) : Cli::tr("before its first step");
        each << (s.silent ? Cli::tr("%1 stopped making progress %2: nothing was heard from it for %3 s (its process "
                                    "stopped, or its host was cut off)")
                                .arg(who, when, seconds(s.seconds))
                          : Cli::tr("%1 stopped making progress %2: its process kept running for %3 s without reaching "
                                    "the collective the other ranks wait in (a busy loop, or a call that never returns)")
                                .arg(who, when, seconds(s.seconds)));
    }
    return each.join(QStringLiteral("; "));
}

// --hosts: this machine's address on the way to the first of them that is not this machine (what the ranks
// there can reach), found by the routing table (a UDP socket connected, nothing sent); loopback when every
// host is this machine or none resolves.
QString addressFacing(const QString& hosts) {
    for (const QString& entry : hosts.split(QLatin1Char(','))) {
        QString host = entry.section(QLatin1Char(':'), 0, 0);
        if (entry.startsWith(QLatin1Char('['))) host = entry.mid(1, entry.indexOf(QLatin1Char(']')) - 1);
        addrinfo hints{};
        hints.ai_socktype = SOCK_DGRAM;
        addrinfo* found = nullptr;
        if (::getaddrinfo(host.toUtf8().constData(), "9", &hints, &found) != 0) continue;
        QString local;
        for (addrinfo* a = found; a && local.isEmpty(); a = a->ai_next) {
            const int fd = ::socket(a->ai_family, SOCK_DGRAM | SOCK_CLOEXEC, 0);
            if (fd < 0) continue;
            sockaddr_storage me{};
            socklen_t len = sizeof me;
            char name[NI_MAXHOST] = {};
            if (::connect(fd, a->ai_addr, a->ai_addrlen) == 0 &&
                ::getsockname(fd, reinterpret_cast<sockaddr*>(&me), &len) == 0 &&
                ::getnameinfo(reinterpret_cast<sockaddr*>(&me), len, name, sizeof name, nullptr, 0, NI_NUMERICHOST) == 0)
                local = QString::fromLatin1(name);
            ::close(fd);
        }
        ::freeaddrinfo(found);
        if (!local.isEmpty() && !local.startsWith(QLatin1String("127.")) && local != QLatin1String("::1")) return local;
    }
    return QStringLiteral("127.0.0.1");
}

// After mpirun ended unsuccessfully: the run's history entry is marked failed with what the launcher knows.
// When rank 0 did not finish it (mpirun ended it, e.g. because another rank died, or it was killed), the
// cause is `why`; otherwise rank 0's own message stays. Either way a rank the launcher saw stopped is named
// first, with the last step the run recorded, and the last good checkpoint is named for --resume.
// Returns the history's run id it marked, 0 when there was none to mark.
qint64 markUnfinishedRun(const CliRequest& r, const QString& outDir, const QDateTime& launched, const QString& why,
                         const QString& stalled, const QString& hung, const QString& resumeNote, bool userStopped,
                         bool* launcherCause) {
    if (r.noHistory) return 0;
    RunStore store;
    if (!store.open(r.db)) return 0;
    const QString abs = QDir(outDir).absolutePath();
    const QString recovered = QCoreApplication::translate("RunStore", "the program ended during the run");
    for (const RunInfo& info : store.listRuns()) {
        if (info.outDir != abs || info.created < launched.addSecs(-1)) continue;
        // still running, or just now marked failed by open() (its process is gone) without rank 0's own message,
        // or "stopped" by a signal nobody asked for (mpirun's SIGTERM to every rank after another one's abort)
        // while a rank had stalled
        const bool unfinished =
            info.status == QLatin1String("running") || (info.status == QLatin1String("failed") && info.error == recovered) ||
            (info.status == QLatin1String("stopped") && !userStopped && (!stalled.isEmpty() || !hung.isEmpty()));
        if (!unfinished && info.status != QLatin1String("failed")) return 0;
        *launcherCause = unfinished;
        QStringList parts;
        if (!stalled.isEmpty()) {
            QString last = Cli::tr("before its first step");
            if (const QVector<StepRow> steps = store.steps(info.id); !steps.isEmpty())
                last = Cli::tr("after step %1").arg(steps.last().step);
            parts << Cli::tr("%1 stopped making progress %2 (its process was stopped); every rank of the job was ended")
                         .arg(stalled, last);
        }
        if (!hung.isEmpty()) parts << Cli::tr("%1; every rank of the job was ended").arg(hung);
        parts << (unfinished ? why : info.error);
        if (!resumeNote.isEmpty()) parts << resumeNote;
        store.finishRun(info.id, QStringLiteral("failed"), parts.join(QStringLiteral("; ")), info.finalMetrics);
        store.flush();
        return info.id;
    }
    return 0;
}

// "the last good checkpoint is step N (FILE); headroom train --resume DIR continues from it", or "" when
// the run folder holds none.
QString resumeNote(const QString& outDir) {
    try {
        if (!hr::has_checkpoint(outDir.toStdString())) return {};
        const hr::Checkpoint ck = hr::read_latest_checkpoint_json(outDir.toStdString());
        QString file = QString::fromStdString(ck.path);
        if (file.endsWith(QLatin1String(".json"))) file = file.left(file.size() - 5) + QStringLiteral(".safetensors");
        return Cli::tr("the last good checkpoint is step %1 (%2); headroom train --resume %3 continues from it")
            .arg(ck.cursor.step)
            .arg(file, outDir);
    } catch (const hr::Error&) {
        return {};
    }
}

// `headroom train --ranks N`: runs `mpirun -np N <this binary> train <the same flags but --ranks>` for
// this machine (loopback only; as root with what Open MPI needs), waits for it and returns its status.
// Each rank then finds itself in the MPI environment (docs/distributed.md).
// mpirun runs in a process group of its own, so Ctrl-C reaches this process only. Every job ends:
// - the first SIGINT or SIGTERM is passed on as SIGUSR1, which mpirun forwards to every rank, and the
//   ranks stop together after the current step as one process does (rank 0 writes the results so far,
//   exit status 1); ranks that have not ended within the grace (HEADROOM_STOP_GRACE) get SIGTERM, and
//   SIGKILL after the grace again. A second signal sends SIGTERM at once, a third SIGKILL.
// - a rank that makes no progress: the others fail after --rank-timeout and end the job (MPI_Abort);
//   a job whose rank has ended while mpirun keeps a stopped one beyond the grace is ended the same way.
// The signals go to every process of the job (RankJob: mpirun and the tree below it, stopped ones woken
// with SIGCONT), and nothing of the job is left running when this returns.
int launchRanks(const CliRequest& r) {
    const QString mpirun = QStandardPaths::findExecutable(QStringLiteral("mpirun"));
    if (mpirun.isEmpty()) {
        eprint(Cli::tr("headroom train: --ranks needs Open MPI's mpirun, which is not on PATH; install openmpi-bin "
                       "(or run one process without --ranks)\n"));
        return 2;
    }
    // The ranks' events (their heartbeats among them) come to this process over a socket: loopback for one
    // machine; with --hosts, this machine's address on the way to the other hosts (cli/rank_events.h).
    RankEvents events;
    const QString bindHost = r.hosts.isEmpty() ? QStringLiteral("127.0.0.1") : addressFacing(r.hosts);
    QString listenError;
    const bool listening = events.listen(bindHost, &listenError);
    if (!listening)
        eprint(Cli::tr("headroom train: cannot listen for the ranks' events on %1 (%2); a rank that stops making "
                       "progress while it runs is not named, and the ranks' events reach no one\n")
                   .arg(bindHost, listenError));
    QStringList args;
    if (::geteuid() == 0) args << QStringLiteral("--allow-run-as-root");
    args << QStringLiteral("--oversubscribe") << QStringLiteral("--bind-to") << QStringLiteral("none")
         << QStringLiteral("--stdin") << QStringLiteral("none")
         << QStringLiteral("--mca") << QStringLiteral("btl") << QStringLiteral("self,tcp");
    if (r.hosts.isEmpty())  // one machine: loopback only. Several: Open MPI's choice, or OMPI_MCA_*_if_include
        args << QStringLiteral("--mca") << QStringLiteral("btl_tcp_if_include") << QStringLiteral("lo")
             << QStringLiteral("--mca") << QStringLiteral("oob_tcp_if_include") << QStringLiteral("lo");
    else
        args << QStringLiteral("--host") << r.hosts;
    // the variables a rank on another machine needs too (mpirun's -x passes this process's value on)
    QProcessEnvironment childEnv = QProcessEnvironment::systemEnvironment();
    if (listening) {
        childEnv.remove(QStringLiteral("HEADROOM_EVENTS_DIR"));  // this process writes the files (RankEvents)
        childEnv.insert(QStringLiteral("HEADROOM_EVENTS_ADDR"), events.address());
        const QString parent = qEnvironmentVariable("HEADROOM_EVENTS_ADDR");
        if (!events.forwardTo(parent, qEnvironmentVariable("HEADROOM_EVENTS_DIR")))
            eprint(Cli::tr("headroom train: the launcher cannot reach its parent at %1 (HEADROOM_EVENTS_ADDR); the "
                           "ranks' events are not passed on\n")
                       .arg(parent));
    }
    for (const char* name : {"HEADROOM_EVENTS_ADDR", "HEADROOM_EVENTS_TELEMETRY_MS", "HEADROOM_TEST_SPIN",
                             "OMP_NUM_THREADS", "OPENBLAS_CORETYPE"})
        if (childEnv.contains(QString::fromLatin1(name))) args << QStringLiteral("-x") << QString::fromLatin1(name);
    args << QStringLiteral("-np") << QString::number(r.ranks) << QCoreApplication::applicationFilePath();
    const QStringList own = QCoreApplication::arguments();
    for (int i = 1; i < own.size(); ++i) {
        const QString& a = own[i];
        if (a == QLatin1String("--ranks") || a == QLatin1String("-ranks")) {
            ++i;  // and its value
            continue;
        }
        if (a.startsWith(QLatin1String("--ranks=")) || a.startsWith(QLatin1String("-ranks="))) continue;
        args << a;
    }
    // one output folder for every rank (rank 0 writes it), known here to find the run in the history
    QString outDir = r.resume.isEmpty() ? r.out : r.resume;
    if (outDir.isEmpty()) {
        outDir = defaultOutDir();
        args << QStringLiteral("--out") << outDir;
    }
    QProcess p;
    p.setProcessChannelMode(QProcess::ForwardedChannels);
    p.setProcessEnvironment(childEnv);
    p.setChildProcessModifier([] { ::setpgid(0, 0); });
    struct sigaction sa {}, oldInt {}, oldTerm {};
    sa.sa_handler = onLauncherSignal;
    sigemptyset(&sa.sa_mask);
    g_launcherSignals = 0;
    sigaction(SIGINT, &sa, &oldInt);
    sigaction(SIGTERM, &sa, &oldTerm);
    const QDateTime launched = QDateTime::currentDateTimeUtc();
    p.start(mpirun, args);
    if (!p.waitForStarted(-1)) {
        sigaction(SIGINT, &oldInt, nullptr);
        sigaction(SIGTERM, &oldTerm, nullptr);
        eprint(Cli::tr("headroom train: could not start %1: %2\n").arg(mpirun, p.errorString()));
        return 1;
    }
    p.closeWriteChannel();
    const pid_t pid = static_cast<pid_t>(p.processId());
    RankJob job(pid);
    const double grace = stopGraceSeconds();
    QElapsedTimer clock;
    clock.start();
    enum class Ending { no, asked, terminated, killed } ending = Ending::no;
    double endingSince = 0, rankEndedSince = -1;
    const auto now = [&clock] { return clock.elapsed() / 1000.0; };
    const auto terminate = [&] {
        ending = Ending::terminated;
        endingSince = now();
        job.signal(SIGTERM);
    };
    const auto killAll = [&] {
        ending = Ending::killed;
        job.signal(SIGKILL);
        ::kill(-pid, SIGKILL);
    };
    int handled = 0;
    std::vector<RankEvents::Stall> stalls;  // the ranks the heartbeats named, when they ended the job
    job.sample();
    while (!p.waitForFinished(100)) {
        job.sample();
        events.pump();
        // a rank without progress for --rank-timeout while the others wait (or one not heard from): the job ends
        if (ending == Ending::no && stalls.empty()) {
            stalls = events.stalls(r.config.rank_timeout, RankEvents::clock());
            if (!stalls.empty()) {
                // the others fail on their own timeout now and end the job (rank 0 files the failure first);
                // ranks still there after the grace are ended (SIGTERM, then SIGKILL)
                eprint(Cli::tr("headroom train: %1; the job ends (ranks still running after %2 s are ended)\n")
                           .arg(stallText(stalls), seconds(grace)));
                ending = Ending::asked;
                endingSince = now();
            }
        }
        const int seen = g_launcherSignals;
        for (; handled < seen; ++handled) {
            if (ending == Ending::no) {
                if (!r.quiet)
                    eprint(Cli::tr("headroom train: stopping every rank after the current step; ranks still running "
                                   "after %1 s are ended (SIGTERM, then SIGKILL %1 s later; again: end them now)\n")
                               .arg(seconds(grace)));
                ::kill(pid, SIGUSR1);
                ending = Ending::asked;
                endingSince = now();
            } else if (ending == Ending::asked) {
                if (!r.quiet) eprint(Cli::tr("headroom train: ending every rank now (SIGTERM; SIGKILL in %1 s)\n").arg(seconds(grace)));
                terminate();
            } else {
                killAll();
            }
        }
        if (ending == Ending::asked && now() - endingSince > grace) {
            eprint(Cli::tr("headroom train: the ranks did not stop within %1 s; ending them (SIGTERM, then SIGKILL "
                           "%1 s later)\n")
                       .arg(seconds(grace)));
            terminate();
        } else if (ending == Ending::terminated && now() - endingSince > grace) {
            eprint(Cli::tr("headroom train: the job did not end within %1 s of SIGTERM; killing every process of it\n")
                       .arg(seconds(grace)));
            killAll();
        }
        // a rank ended (failed, aborted, killed) but mpirun keeps a stopped one: the job ends as a whole. (Not
        // for any rank that ended: at a normal end rank 0 may write and file for longer than the grace.)
        if (ending == Ending::no && job.aRankEnded() && !job.stoppedRanks(grace).empty()) {
            if (rankEndedSince < 0) rankEndedSince = now();
            else if (now() - rankEndedSince > grace) {
                eprint(Cli::tr("headroom train: a rank ended and a stopped one did not within %1 s; ending them (SIGTERM, "
                               "then SIGKILL %1 s later)\n")
                           .arg(seconds(grace)));
                terminate();
            }
        }
    }
    sigaction(SIGINT, &oldInt, nullptr);
    sigaction(SIGTERM, &oldTerm, nullptr);
    events.pump();  // the last lines, passed on
    // the other ranks' own timeout may have ended the job before the launcher judged: judged now, as it ended
    const bool namedAtEnd = stalls.empty() && (p.exitStatus() != QProcess::NormalExit || p.exitCode() != 0);
    if (namedAtEnd) stalls = events.stalls(r.config.rank_timeout * 0.9, RankEvents::clock(), true);
    // mpirun is gone; whatever of its job is left (a rank it lost, a helper) goes now
    if (const int left = job.signal(SIGKILL); left > 0)
        eprint(Cli::tr("headroom train: %n process(es) of the job outlived mpirun and were killed\n", nullptr, left));
    const bool crashed = p.exitStatus() != QProcess::NormalExit;
    const int code = crashed ? 1 : p.exitCode();
    if (code != 0) {
        const QString why = handled > 0
            ? Cli::tr("the ranks were ended (interrupted) before rank 0 recorded the run's end")
            : Cli::tr("rank 0 was ended before it recorded the run's end (mpirun exit status %1); another rank "
                      "probably failed first: mpirun's message names it")
                  .arg(code);
        QStringList stalled;
        const std::set<int> stopped = job.stoppedRanks(1.0);
        for (int rank : stopped) stalled << Cli::tr("rank %1").arg(rank);
        std::vector<RankEvents::Stall> hung;  // named by their heartbeats, not seen stopped here
        for (const RankEvents::Stall& s : stalls)
            if (!stopped.count(s.rank)) hung.push_back(s);
        const QString note = resumeNote(outDir);
        bool launcherCause = false;
        const qint64 marked = markUnfinishedRun(r, outDir, launched, why, stalled.join(QStringLiteral(", ")),
                                                hung.empty() ? QString() : stallText(hung), note, handled > 0, &launcherCause);
        if (!stalled.isEmpty())
            eprint(Cli::tr("headroom train: %1 stopped making progress (its process was stopped); every rank of the "
                           "job was ended\n")
                       .arg(stalled.join(QStringLiteral(", "))));
        if (namedAtEnd && !hung.empty()) eprint(Cli::tr("headroom train: %1; every rank of the job was ended\n").arg(stallText(hung)));
        if (marked > 0 && launcherCause) eprint(Cli::tr("headroom train: %1\n").arg(why));
        if (!note.isEmpty()) eprint(Cli::tr("headroom train: %1\n").arg(note));
    }
    return code;
}

}  // namespace

int runTrainCommand(const CliRequest& request) {
    CliRequest r = request;
    const hr::RankEnvironment env = hr::rank_environment();
    const bool severalRanks = env.launched && env.world_size > 1;
    const bool writer = !severalRanks || env.rank == 0;  // only rank 0 writes files, history and notifications
    if (!writer) {
        r.quiet = true;
        r.noHistory = true;
        r.notify.clear();
    }
    auto bad = [writer](const QString& message) {
        if (writer) eprint(Cli::tr("headroom train: %1\n").arg(message));  // every rank refuses alike: say it once
        return 2;
    };
    if (!r.trace.isEmpty() && !QFileInfo(r.trace).absoluteDir().exists())  // refused before anything runs
        return bad(Cli::tr("the folder of --trace %1 does not exist; create it or choose another file").arg(r.trace));
    const bool resume = !r.resume.isEmpty();
    if (resume) {
        if (const QString why = resumeConfig(r); !why.isEmpty()) return bad(why);
    } else if (!r.configFile.isEmpty()) {
        if (const QString why = configFromFile(r); !why.isEmpty()) return bad(why);
    } else {
        try {
            resolveModel(r);
        } catch (const hr::Error& e) {
            return bad(messageText(e.message()));
        }
        // no model named: the data's preset (tables and text no longer get seed-cnn), said once
        if (r.presetFromData && r.preset != "seed-cnn" && !r.quiet && writer)
            eprint(Cli::tr("headroom train: no --preset or --model given: training %1 (--preset NAME for another)\n")
                       .arg(dataPresetText(r.config.data)));
    }
    if (!r.hosts.isEmpty() && r.ranks < 2 && !env.launched)
        return bad(Cli::tr("--hosts starts ranks on several machines; give --ranks N (N at least 2) too"));
    if (r.ranks > 1 && !env.launched) {
        // settings every rank would refuse alike are refused here, once, before mpirun starts
        try {
            hr::validate_train_config(r.config);
            hr::validate_model_spec(r.config.model);
            (void)hr::resolve_strategy(r.config.strategy, r.config.model, r.config.batch, r.ranks, 0);
        } catch (const hr::Error& e) {
            return bad(messageText(e.message()));
        }
        return launchRanks(r);
    }
    QString outDir = resume ? r.resume : r.out;
    if (outDir.isEmpty()) outDir = defaultOutDir();
    if (!writer) outDir.clear();  // nothing written by this rank
    else if (const QString why = RunController::checkOutputFolder(outDir); !why.isEmpty())
        return bad(QStringLiteral("--out %1").arg(why));
    WebhookNotifier::Settings notify;
    if (!r.notify.isEmpty()) {
        QString why;
        if (!parseNotifyTarget(r.notify, &notify, &why)) return bad(QStringLiteral("--notify: %1").arg(why));
    }

    // the run history (SQLite), written from this (the main) thread
    std::unique_ptr<RunStore> store;
    if (!r.noHistory) {
        store = std::make_unique<RunStore>();
        if (!store->open(r.db)) {
            eprint(Cli::tr("headroom train: the run history is not available (%1); continuing without it\n").arg(store->lastError()));
            store.reset();
        }
    }

    RunController controller;
    controller.webhook()->setSettings(notify);
    RunOptions options;
    options.name = r.name;
    options.outDir = outDir;
    options.store = store.get();
    options.recordRefusedRuns = false;      // exit code 2 and nothing written
    options.sampleTelemetry = store != nullptr;
    options.resume = resume;
    TrainPrinter printer(controller, r.quiet);
    printer.setTimeline(r.timeline, r.trace);
    printer.setDeviceFlag(r.config.device);
    printer.setLanguageModel(hr::is_token_model(r.config.model));
    printer.setTable(hr::is_table_data(r.config.data));

    std::optional<RunOutcome> outcome;
    QEventLoop loop;
    QObject::connect(&controller, &RunController::runFinished, &loop, [&](const RunOutcome& o) {
        outcome = o;
        // a webhook that does not answer must not keep the process: its own time-out, and a margin
        QTimer::singleShot(controller.webhook()->settings().timeoutMs + 2000, &loop, &QEventLoop::quit);
    });
    QObject::connect(&controller, &RunController::notificationsSettled, &loop, &QEventLoop::quit);
    SignalWatcher watcher;  // Ctrl-C: stop after the current step and write what there is
    QObject::connect(&watcher, &SignalWatcher::interrupted, &controller, &RunController::stop);
    // several ranks: the launcher's Ctrl-C arrives as SIGUSR1 (mpirun forwards it to every rank); the
    // ranks then stop together, after the same step, like one process
    if (severalRanks) watcher.watchStopSignal(SIGUSR1);
    std::unique_ptr<EventStream> events;
    const QString eventsDir = qEnvironmentVariable("HEADROOM_EVENTS_DIR"), eventsAddr = qEnvironmentVariable("HEADROOM_EVENTS_ADDR");
    if (!eventsDir.isEmpty() || !eventsAddr.isEmpty())
        events = std::make_unique<EventStream>(controller, eventsDir, eventsAddr, severalRanks ? env.rank : 0,
                                               !severalRanks || env.local_rank == 0);

    // --pause-file FILE: paused between steps while FILE exists. Several ranks: rank 0 watches it (the
    // others may not see rank 0's disk) and the ranks agree on pausing once per step (trainer.cpp).
    // Looked at once as the run starts (a file that is there holds it before its first step), then
    // five times a second.
    QTimer pauseWatch;
    std::function<void()> checkPause = [] {};
    if (!r.pauseFile.isEmpty() && (!severalRanks || env.rank == 0)) {
        const QString pauseFile = r.pauseFile;
        const bool quiet = r.quiet;
        checkPause = [&controller, pauseFile, quiet] {
            if (!controller.isRunning()) return;
            const bool want = QFileInfo::exists(pauseFile);
            if (want == controller.isPaused()) return;
            if (want) controller.pause();
            else controller.resume();
            if (!quiet)
                eprint(want ? Cli::tr("headroom train: paused between steps (%1 exists; remove it to go on)\n").arg(pauseFile)
                            : Cli::tr("headroom train: going on (%1 was removed)\n").arg(pauseFile));
        };
        QObject::connect(&pauseWatch, &QTimer::timeout, &controller, checkPause);
        pauseWatch.start(200);
    }

    QString why;
    if (!controller.start(r.config, options, &why)) return bad(why);
    checkPause();
    loop.exec();
    const hr::TrainResult& result = outcome->result();
    int code = 0;
    if (writer) {
        code = printer.finish(*outcome, store.get());
    } else {
        code = outcome->exitCode();
        // a failure of this rank's own (not the settings every rank shares) is said by this rank
        if (result.status == "failed" && !result.bad_input) {
            const QString error = resultError(result);  // a communicator's own message names the rank already
            if (error.startsWith(QStringLiteral("rank %1:").arg(env.rank))) eprint(Cli::tr("headroom train: %1\n").arg(error));
            else eprint(Cli::tr("headroom train: rank %1: %2\n").arg(env.rank).arg(error));
        }
    }
    // A rank that failed (a peer died or hung, out of memory) ends every rank now, once it has said why and
    // rank 0 has recorded the failure; mpirun then ends with a non-zero status.
    if (severalRanks && result.status == "failed" && !result.bad_input) hr::abort_ranks(result.error);
    return code;
}

}  // namespace hrapp
