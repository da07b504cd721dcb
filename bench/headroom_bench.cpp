// headroom_bench: measurements for scripts/bench (docs/benchmarks.md). Not a test: it asserts nothing,
// it prints one JSON object on stdout (progress on stderr) and scripts/bench turns it into tables.
//
//   headroom_bench gui [--steps N] [--threads T] [--repeat R] [--points P]
//       The same seed-cnn / Fashion-MNIST run (batch 64, SGD lr 0.01 momentum 0.5) headless (the trainer
//       on a thread of its own, as `headroom train`) and in the main window with the Monitor charts
//       showing, alternated R times; then the replot time of one LiveChart holding P points.
//   headroom_bench telemetry [--steps N] [--threads T] [--repeat R]
//       Training step time with no telemetry sampler, with the sampler at 500 ms and at 100 ms,
//       alternated R times; plus the cost of one sample taken on the caller's thread.
#include <QApplication>
#include <QElapsedTimer>
#include <QStandardPaths>
#include <QTimer>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <map>
#include <mutex>
#include <numeric>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include <nlohmann/json.hpp>

#include <sys/resource.h>

#include "charts/LiveChart.h"
#include "data/dataset.h"
#include "gui/ForegroundCpu.h"
#include "gui/MainWindow.h"
#include "gui/MonitorView.h"
#include "gui/TelemetryMonitor.h"
#include "nn/model_spec.h"
#include "session/TrainingSession.h"
#include "telemetry/nvml_source.h"
#include "telemetry/sampler.h"
#include "train/trainer.h"

using json = nlohmann::json;
using Clock = std::chrono::steady_clock;

namespace {

struct Options {
    std::int64_t steps = 938;  // one epoch of Fashion-MNIST at batch 64
    int threads = 0;           // 0: all cores
    int repeat = 2;
    int points = 100000;
};

void progress(const std::string& s) {
    std::fprintf(stderr, "%s\n", s.c_str());
    std::fflush(stderr);
}

hr::TrainConfig benchConfig(const Options& o) {
    hr::TrainConfig c;
    c.model = hr::preset_model("seed-cnn");
    c.model_source = "preset:seed-cnn";
    c.data = hr::probe_dataset("fashion-mnist").available ? "fashion-mnist" : "synthetic";
    c.steps = o.steps;
    c.batch = 64;
    c.optimizer.kind = "sgd";
    c.optimizer.lr = 0.01;
    c.optimizer.momentum = 0.5;
    c.threads = o.threads;
    c.seed = 1;
    return c;
}

// What one run measured: the trainer's own figure (samples / summed step time) and the wall-clock
// throughput between the first and the last step event (everything in between counted: data
// loading waits, callbacks, the GUI thread competing for the cores).
struct RunFigures {
    double trainer_images_per_second = 0;
    double wall_images_per_second = 0;
    double test_accuracy = 0;
    std::int64_t steps = 0;
    double mean_step_ms = 0;
    std::string status;
};

struct WallClock {
    double first = -1, last = -1;
    std::int64_t first_step = 0, last_step = 0;
    void add(const hr::StepEvent& e) {
        if (first < 0) {
            first = e.elapsed_seconds;
            first_step = e.step;
        }
        last = e.elapsed_seconds;
        last_step = e.step;
    }
    double imagesPerSecond(std::int64_t batch) const {
        const double dt = last - first;
        return dt > 0 ? static_cast<double>((last_step - first_step) * batch) / dt : 0;
    }
};

RunFigures figures(const hr::TrainResult& r, const WallClock& w, std::int64_t batch) {
    RunFigures f;
    f.status = r.status;
    f.trainer_images_per_second = r.images_per_second;
    f.wall_images_per_second = w.imagesPerSecond(batch);
    f.test_accuracy = r.test_accuracy;
    f.steps = r.steps;
    f.mean_step_ms = r.images_per_second > 0 ? 1000.0 * static_cast<double>(batch) / r.images_per_second : 0;
    return f;
}

json toJson(const RunFigures& f) {
    return {{"trainer_images_per_second", f.trainer_images_per_second},
            {"wall_images_per_second", f.wall_images_per_second},
            {"test_accuracy", f.test_accuracy},
            {"steps", f.steps},
            {"mean_step_ms", f.mean_step_ms},
            {"status", f.status}};
}

// Headless: the trainer on a thread of its own while the main thread waits (as the CLI, which trains
// on its main thread with nothing else running).
RunFigures runHeadless(const hr::TrainConfig& c) {
    WallClock w;
    hr::TrainCallbacks cb;
    cb.on_step = [&](const hr::StepEvent& e) { w.add(e); };
    hr::Trainer trainer(c, cb);
    hr::TrainResult r;
    hrapp::ForegroundCpuIdle idle;  // this thread waits, it does not draw (once a window has hooked it)
    std::thread t([&] { r = trainer.run(); });
    t.join();
    return figures(r, w, c.batch);
}

struct GuiRun {
    RunFigures f;
    int replots = 0;
    double replot_ms_total = 0;
    double replot_ms_max = 0;
    // CPU time the GUI thread (this one) used from Start to the run's end, and the whole process's,
    // against the trainer's own seconds: what the window takes from the training threads on a machine
    // with as many cores as training threads. Robust to a busy machine (CPU time, not wall time).
    double gui_thread_cpu_seconds = 0;
    double process_cpu_seconds = 0;
    double run_seconds = 0;
    int step_batches = 0, memory_events = 0, telemetry_samples = 0;
};

// CPU seconds (user + system) of the calling thread (RUSAGE_THREAD) or of the whole process.
double cpuSeconds(int who) {
    rusage u{};
    getrusage(who, &u);
    return double(u.ru_utime.tv_sec + u.ru_stime.tv_sec) + double(u.ru_utime.tv_usec + u.ru_stime.tv_usec) / 1e6;
}

// In the main window, Monitor tab showing, started as the Start button does.
GuiRun runInWindow(const hr::TrainConfig& c) {
    hrapp::MainWindow w;
    w.setAskBeforeClose(false);
    w.setPersistState(false);
    w.resize(1600, 1000);
    w.setTrainConfig(c);
    w.show();
    GuiRun g;
    WallClock wall;
    hr::TrainResult result;
    QObject::connect(w.session(), &hrapp::TrainingSession::stepsReady, &w,
                     [&wall, &g, &w](const QVector<hr::StepEvent>& steps) {
                         ++g.step_batches;
                         for (const auto& e : steps) wall.add(e);
                         // HEADROOM_GUI_PNG=FILE: a picture of the window half way through the run
                         static bool saved = false;
                         const QByteArray png = qgetenv("HEADROOM_GUI_PNG");
                         if (!saved && !png.isEmpty() && !steps.isEmpty() && 2 * steps.last().step >= steps.last().total_steps) {
                             saved = true;
                             w.grab().save(QString::fromLocal8Bit(png));
                         }
                     });
    QObject::connect(w.session(), &hrapp::TrainingSession::memoryUpdated, &w, [&g] { ++g.memory_events; });
    double threadCpu0 = 0, processCpu0 = 0;
    QElapsedTimer runClock;
    std::int64_t samples0 = 0;
    for (hrw::LiveChart* chart : w.monitor()->charts())
        QObject::connect(chart, &QCustomPlot::afterReplot, &w, [&g, chart] {
            ++g.replots;
            g.replot_ms_total += chart->replotTime();
            g.replot_ms_max = std::max(g.replot_ms_max, chart->replotTime());
        });
    QEventLoop loop;
    QObject::connect(&w, &hrapp::MainWindow::runFinished, &loop, [&](const hr::TrainResult& r) {
        g.gui_thread_cpu_seconds = cpuSeconds(RUSAGE_THREAD) - threadCpu0;
        g.process_cpu_seconds = cpuSeconds(RUSAGE_SELF) - processCpu0;
        g.run_seconds = runClock.nsecsElapsed() / 1e9;
        g.telemetry_samples = int(w.telemetry()->samplesDelivered() - samples0);
        result = r;
        loop.quit();
    });
    QTimer::singleShot(300, &w, [&] {
        threadCpu0 = cpuSeconds(RUSAGE_THREAD);
        processCpu0 = cpuSeconds(RUSAGE_SELF);
        samples0 = w.telemetry()->samplesDelivered();
        runClock.start();
        w.start();
    });
    QTimer::singleShot(1800 * 1000, &loop, &QEventLoop::quit);  // never hang
    loop.exec();
    g.f = figures(result, wall, c.batch);
    w.close();
    return g;
}

double median(std::vector<double> v) {
    if (v.empty()) return 0;
    std::sort(v.begin(), v.end());
    const std::size_t n = v.size();
    return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

double mean(const std::vector<double>& v) {
    return v.empty() ? 0 : std::accumulate(v.begin(), v.end(), 0.0) / static_cast<double>(v.size());
}

// Subclass only to reach the chart's own automatic-view rescale (what refresh() does before replotting).
class BenchChart : public hrw::LiveChart {
public:
    using hrw::LiveChart::rescaleForAutoView;
};

// variant: "" the chart as the application configures it; "pen1" the same with 1 px pens; "noaa" the
// same without antialiasing (diagnostics: where the replot time goes).
json replotBench(int points, int seriesCount, bool raiseCap, const std::string& variant = "") {
    BenchChart chart;
    chart.resize(760, 420);  // about one chart's share of the Monitor tab at 1600x1000
    chart.setTitle(QStringLiteral("Loss"));
    chart.setAxisLabels(QStringLiteral("step"), QStringLiteral("loss"));
    if (raiseCap) chart.setMaxPointsPerSeries(points);
    const QColor colors[] = {QColor(0x1f, 0x77, 0xb4), QColor(0xff, 0x7f, 0x0e), QColor(0x2c, 0xa0, 0x2c)};
    std::mt19937 rng(1);
    std::normal_distribution<double> noise(0.0, 0.08);
    for (int s = 0; s < seriesCount; ++s) {
        int idx = chart.addSeries(QStringLiteral("series %1").arg(s + 1), colors[s % 3], s > 0);
        // a noisy decaying training-loss curve, delivered in batches like the session's (~40 points)
        QVector<double> x, y;
        for (int i = 0; i < points; ++i) {
            x.push_back(i + 1);
            y.push_back(0.3 + 2.0 * std::exp(-i / (points / 8.0)) + noise(rng) + 0.05 * s);
            if (x.size() == 40 || i == points - 1) {
                chart.appendPoints(idx, x, y);
                x.clear();
                y.clear();
            }
        }
    }
    for (int s = 0; s < chart.graphCount(); ++s) {
        if (variant == "pen1") {
            QPen pen = chart.graph(s)->pen();
            pen.setWidthF(1.0);
            chart.graph(s)->setPen(pen);
        } else if (variant == "noaa") {
            chart.graph(s)->setAntialiased(false);
        }
    }
    chart.show();
    QCoreApplication::processEvents();
    chart.replot(QCustomPlot::rpImmediateRefresh);  // warm-up (fonts, layout)
    std::vector<double> full, drawOnly;
    QElapsedTimer total;
    total.start();
    for (int i = 0; i < 50 && (i < 5 || total.elapsed() < 3000); ++i) {  // 50 replots, or 3 s
        QElapsedTimer t;
        t.start();
        chart.rescaleForAutoView();
        chart.replot(QCustomPlot::rpImmediateRefresh);
        full.push_back(t.nsecsElapsed() / 1e6);
        drawOnly.push_back(chart.replotTime());
    }
    return {{"variant", variant.empty() ? "as in the application" : variant == "pen1" ? "1 px pens" : "no antialiasing"},
            {"points_appended_per_series", points},
            {"series", seriesCount},
            {"points_held_per_series", chart.pointCount(0)},
            {"max_points_per_series", chart.maxPointsPerSeries()},
            {"size", {chart.width(), chart.height()}},
            {"replots", full.size()},
            {"replot_ms_median", median(full)},
            {"replot_ms_mean", mean(full)},
            {"replot_ms_max", *std::max_element(full.begin(), full.end())},
            {"qcustomplot_replot_time_ms_median", median(drawOnly)}};
}

int benchGui(const Options& o) {
    hr::TrainConfig c = benchConfig(o);
    json runs = json::array();
    std::vector<double> headlessT, guiT, headlessW, guiW, guiCpuPerMin;
    for (int r = 0; r < o.repeat; ++r) {
        progress("gui bench: round " + std::to_string(r + 1) + "/" + std::to_string(o.repeat) + ", headless...");
        RunFigures h = runHeadless(c);
        progress("  headless: " + std::to_string(static_cast<int>(h.trainer_images_per_second)) + " images/s; window...");
        GuiRun g = runInWindow(c);
        progress("  window:   " + std::to_string(static_cast<int>(g.f.trainer_images_per_second)) + " images/s");
        headlessT.push_back(h.trainer_images_per_second);
        guiT.push_back(g.f.trainer_images_per_second);
        headlessW.push_back(h.wall_images_per_second);
        guiW.push_back(g.f.wall_images_per_second);
        json gj = toJson(g.f);
        gj["chart_replots"] = g.replots;
        gj["chart_replot_ms_mean"] = g.replots ? g.replot_ms_total / g.replots : 0.0;
        gj["chart_replot_ms_max"] = g.replot_ms_max;
        gj["gui_thread_cpu_seconds"] = g.gui_thread_cpu_seconds;
        gj["process_cpu_seconds"] = g.process_cpu_seconds;
        gj["run_wall_seconds"] = g.run_seconds;
        gj["gui_thread_cpu_seconds_per_training_minute"] = g.run_seconds > 0 ? 60.0 * g.gui_thread_cpu_seconds / g.run_seconds : 0.0;
        gj["gui_thread_cpu_share_percent"] = g.run_seconds > 0 ? 100.0 * g.gui_thread_cpu_seconds / g.run_seconds : 0.0;
        gj["step_batches"] = g.step_batches;
        gj["memory_events"] = g.memory_events;
        gj["telemetry_samples"] = g.telemetry_samples;
        guiCpuPerMin.push_back(gj["gui_thread_cpu_seconds_per_training_minute"].get<double>());
        progress("  window GUI thread: " + std::to_string(g.gui_thread_cpu_seconds) + " CPU s in " +
                 std::to_string(g.run_seconds) + " s (" + std::to_string(g.replots) + " replots, " +
                 std::to_string(g.step_batches) + " step batches, " + std::to_string(g.memory_events) + " memory events)");
        runs.push_back({{"round", r + 1}, {"headless", toJson(h)}, {"gui", gj}});
    }
    progress("gui bench: replot time with " + std::to_string(o.points) + " points...");
    json replot = json::array();
    replot.push_back(replotBench(o.points, 1, true));
    replot.push_back(replotBench(o.points, 3, true));
    replot.push_back(replotBench(o.points, 1, false));
    replot.push_back(replotBench(o.points, 1, true, "pen1"));
    replot.push_back(replotBench(o.points, 1, true, "noaa"));
    const double ht = mean(headlessT), gt = mean(guiT), hw = mean(headlessW), gw = mean(guiW);
    // the target's figure: the median over rounds of each round's window / headless ratio
    std::vector<double> roundRatio, roundWallRatio;
    for (std::size_t i = 0; i < headlessT.size(); ++i) {
        if (headlessT[i] > 0) roundRatio.push_back(guiT[i] / headlessT[i]);
        if (headlessW[i] > 0) roundWallRatio.push_back(guiW[i] / headlessW[i]);
    }
    json out = {{"bench", "gui"},
                {"config", {{"model", "seed-cnn"}, {"data", c.data}, {"steps", c.steps}, {"batch", c.batch},
                            {"optimizer", "sgd lr 0.01 momentum 0.5"}, {"threads", c.threads},
                            {"qpa_platform", QGuiApplication::platformName().toStdString()}}},
                {"runs", runs},
                {"headless_images_per_second", ht},
                {"gui_images_per_second", gt},
                {"ratio", ht > 0 ? gt / ht : 0.0},
                {"headless_wall_images_per_second", hw},
                {"gui_wall_images_per_second", gw},
                {"wall_ratio", hw > 0 ? gw / hw : 0.0},
                {"ratio_median_of_rounds", median(roundRatio)},
                {"gui_thread_cpu_seconds_per_training_minute_median", median(guiCpuPerMin)},
                {"wall_ratio_median_of_rounds", median(roundWallRatio)},
                {"replot", replot}};
    std::printf("%s\n", out.dump(2).c_str());
    return 0;
}

struct TelemetryRun {
    double mean_step_ms = 0;
    double median_step_ms = 0;
    double images_per_second = 0;
    std::int64_t samples = 0;
};

TelemetryRun runWithSampler(const hr::TrainConfig& c, int intervalMs) {
    std::vector<double> stepMs;
    stepMs.reserve(static_cast<std::size_t>(c.steps));
    std::unique_ptr<hr::TelemetrySampler> sampler;
    std::mutex m;
    std::vector<hr::TelemetrySample> pending;  // as the CLI: the sampler queues, the step drains
    hr::TrainCallbacks cb;
    cb.on_step = [&](const hr::StepEvent& e) {
        stepMs.push_back(e.step_seconds * 1000.0);
        if (sampler) {
            sampler->set_current_step(e.step);
            std::vector<hr::TelemetrySample> batch;
            std::lock_guard<std::mutex> lock(m);
            batch.swap(pending);
        }
    };
    if (intervalMs > 0)
        sampler = std::make_unique<hr::TelemetrySampler>(hr::make_default_gpu_source(),
                                                         [&](const hr::TelemetrySample& t) {
                                                             std::lock_guard<std::mutex> lock(m);
                                                             pending.push_back(t);
                                                         },
                                                         intervalMs);
    hr::Trainer trainer(c, cb);
    if (sampler) sampler->start();
    hr::TrainResult r = trainer.run();
    TelemetryRun t;
    if (sampler) {
        sampler->stop();
        t.samples = sampler->samples_taken();
    }
    // drop the first steps (caches, thread pool start) from the step-time figures
    if (stepMs.size() > 20) stepMs.erase(stepMs.begin(), stepMs.begin() + 10);
    t.mean_step_ms = mean(stepMs);
    t.median_step_ms = median(stepMs);
    t.images_per_second = r.images_per_second;
    return t;
}

int benchTelemetry(const Options& o) {
    hr::TrainConfig c = benchConfig(o);
    c.evaluate_each_epoch = false;
    const std::vector<int> intervals = {0, 500, 100};  // 0: no sampler
    std::map<int, std::vector<double>> meanMs, medianMs;
    std::map<int, std::int64_t> samples;
    json rounds = json::array();
    for (int r = 0; r < o.repeat; ++r) {
        json round = json::object();
        for (std::size_t k = 0; k < intervals.size(); ++k) {
            const int iv = intervals[(k + static_cast<std::size_t>(r)) % intervals.size()];  // rotate the order
            progress("telemetry bench: round " + std::to_string(r + 1) + ", sampler " +
                     (iv ? std::to_string(iv) + " ms" : std::string("off")) + "...");
            TelemetryRun t = runWithSampler(c, iv);
            meanMs[iv].push_back(t.mean_step_ms);
            medianMs[iv].push_back(t.median_step_ms);
            samples[iv] += t.samples;
            round[iv ? std::to_string(iv) + "ms" : "off"] = {{"mean_step_ms", t.mean_step_ms},
                                                             {"median_step_ms", t.median_step_ms},
                                                             {"images_per_second", t.images_per_second},
                                                             {"samples", t.samples}};
        }
        rounds.push_back(round);
    }
    // The sampler's own cost: one sample on this thread (what its thread does every interval).
    hr::TelemetrySampler probe(hr::make_default_gpu_source(), [](const hr::TelemetrySample&) {});
    probe.sample_now();
    std::vector<double> sampleMs;
    for (int i = 0; i < 200; ++i) {
        auto t0 = Clock::now();
        probe.sample_now();
        sampleMs.push_back(std::chrono::duration<double, std::milli>(Clock::now() - t0).count());
    }
    const double costMs = median(sampleMs);
    auto summary = [&](int iv) {
        const double base = median(meanMs[0]);
        const double with = median(meanMs[iv]);
        json j = {{"mean_step_ms", with},
                  {"median_step_ms", median(medianMs[iv])},
                  {"samples", samples[iv]}};
        if (iv) {
            j["overhead_percent"] = base > 0 ? 100.0 * (with - base) / base : 0.0;
            j["overhead_median_percent"] =
                median(medianMs[0]) > 0 ? 100.0 * (median(medianMs[iv]) - median(medianMs[0])) / median(medianMs[0]) : 0.0;
            j["sampler_duty_percent"] = 100.0 * costMs / iv;  // share of one core the sampler thread uses
        }
        return j;
    };
    json out = {{"bench", "telemetry"},
                {"config", {{"model", "seed-cnn"}, {"data", c.data}, {"steps", c.steps}, {"batch", c.batch},
                            {"threads", c.threads}, {"repeat", o.repeat},
                            {"gpu_source", hr::make_default_gpu_source()->status()}}},
                {"rounds", rounds},
                {"sample_cost_ms_median", costMs},
                {"sample_cost_ms_max", *std::max_element(sampleMs.begin(), sampleMs.end())},
                {"off", summary(0)},
                {"500ms", summary(500)},
                {"100ms", summary(100)}};
    std::printf("%s\n", out.dump(2).c_str());
    return 0;
}

}  // namespace

int main(int argc, char** argv) {
    std::vector<std::string> args(argv + 1, argv + argc);
    if (args.empty() || args[0] == "--help" || (args[0] != "gui" && args[0] != "telemetry")) {
        std::fprintf(stderr,
                     "usage: headroom_bench gui|telemetry [--steps N] [--threads T] [--repeat R] [--points P]\n"
                     "(normally run through scripts/bench; see docs/benchmarks.md)\n");
        return args.empty() || args[0] != "--help" ? 2 : 0;
    }
    Options o;
    if (args[0] == "telemetry") o.steps = 400, o.repeat = 3;
    for (std::size_t i = 1; i < args.size(); ++i) {
        const std::string& a = args[i];
        if (i + 1 >= args.size()) {
            std::fprintf(stderr, "headroom_bench: %s needs a value\n", a.c_str());
            return 2;
        }
        const long long v = std::atoll(args[++i].c_str());
        if (a == "--steps") o.steps = std::max(20LL, v);
        else if (a == "--threads") o.threads = static_cast<int>(std::max(0LL, v));
        else if (a == "--repeat") o.repeat = static_cast<int>(std::max(1LL, v));
        else if (a == "--points") o.points = static_cast<int>(std::max(100LL, v));
        else {
            std::fprintf(stderr, "headroom_bench: unknown option %s\n", a.c_str());
            return 2;
        }
    }
    QApplication app(argc, argv);
    QCoreApplication::setOrganizationName(QStringLiteral("Headroom"));
    QCoreApplication::setApplicationName(QStringLiteral("Headroom"));
    QStandardPaths::setTestModeEnabled(true);  // leave the user's settings and history alone
    hrapp::TrainingSession::registerMetaTypes();
    try {
        return args[0] == "gui" ? benchGui(o) : benchTelemetry(o);
    } catch (const std::exception& e) {
        std::fprintf(stderr, "headroom_bench: %s\n", e.what());
        return 1;
    }
}
