// headroom_bench_cpu: one training run through hr::Trainer (the code `headroom train` runs), for
// scripts/bench cpu (docs/benchmarks.md). Not a test: it asserts nothing and prints one JSON object.
//
//   headroom_bench_cpu (--preset NAME | --model FILE.json) [--data fashion-mnist] [--steps 60 | --epochs N]
//       [--batch 64] [--threads T] [--optimizer sgd] [--lr 0.01] [--momentum 0.5] [--checkpoint none|all|...]
//       [--train-limit N] [--test-limit 1000] [--seed 1]
//   headroom_bench_cpu --print-spec (--preset NAME | --model FILE.json)
//       prints the model spec as JSON (what `headroom presets --json NAME` prints), for
//       bench/torch_reference.py, so `scripts/bench cpu` needs no GUI build
//
// Output: loop_seconds and loop_images_per_second (the training loop's wall time, from the start of the
// first step to the end of the last: what a person waits for, batches, callbacks and the data thread's
// hand-offs included; evaluation and set-up are outside it), images_per_second (samples / summed step
// time, the figure run.json reports), the step times (each step: upload, forward, loss, backward,
// optimizer update, as the trainer times them) with their median, the measured activation peak of the
// ledger, test accuracy, the backend's name.
// Core only (no Qt), so it also runs where the GUI libraries are missing.
#include <time.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "base/error.h"
#include "nn/model_spec.h"
#include "plan/plan_request.h"
#include "train/trainer.h"

using json = nlohmann::json;

namespace {

[[noreturn]] void usage(const std::string& why) {
    std::fprintf(stderr,
                 "headroom_bench_cpu: %s\nusage: headroom_bench_cpu (--preset NAME | --model FILE.json) [--data D] "
                 "[--steps N] [--batch B] [--threads T] [--optimizer sgd|adam] [--lr F] [--momentum F] "
                 "[--checkpoint C] [--test-limit N] [--seed S] [--print-spec]\n",
                 why.c_str());
    std::exit(2);
}

double thread_cpu_ms() {
    timespec ts{};
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return 1e3 * double(ts.tv_sec) + 1e-6 * double(ts.tv_nsec);
}

double median(std::vector<double> v) {
    if (v.empty()) return 0;
    std::sort(v.begin(), v.end());
    return v[v.size() / 2];
}

}  // namespace

int main(int argc, char** argv) {
    hr::TrainConfig c;
    c.steps = 60;
    c.batch = 64;
    c.optimizer.kind = "sgd";
    c.optimizer.lr = 0.01;
    c.optimizer.momentum = 0.5;
    c.test_limit = 1000;
    c.evaluate_each_epoch = false;
    std::string preset = "seed-cnn", model_file;
    bool print_spec = false;
    for (int i = 1; i < argc; ++i) {
        const std::string a = argv[i];
        auto next = [&]() -> std::string {
            if (i + 1 >= argc) usage(a + " needs a value");
            return argv[++i];
        };
        if (a == "--preset") preset = next();
        else if (a == "--model") model_file = next();
        else if (a == "--data") c.data = next();
        else if (a == "--steps") c.steps = std::stoll(next());
        else if (a == "--epochs") {
            c.epochs = std::stoi(next());
            c.steps = 0;
        } else if (a == "--train-limit") c.train_limit = std::stoll(next());
        else if (a == "--batch") c.batch = std::stoll(next());
        else if (a == "--threads") c.threads = std::stoi(next());
        else if (a == "--optimizer") c.optimizer.kind = next();
        else if (a == "--lr") c.optimizer.lr = std::stod(next());
        else if (a == "--momentum") c.optimizer.momentum = std::stod(next());
        else if (a == "--checkpoint") c.strategy.checkpoint = next();
        else if (a == "--test-limit") c.test_limit = std::stoll(next());
        else if (a == "--seed") c.seed = std::stoull(next());
        else if (a == "--print-spec") print_spec = true;
        else usage("unknown argument " + a);
    }
    try {
        if (!model_file.empty()) {
            c.model = hr::load_model_spec(model_file);
            c.model_source = "file:" + model_file;
        } else {
            c.model = hr::preset_model(preset);
            c.model_source = "preset:" + preset;
        }
        if (print_spec) {
            std::printf("%s\n", hr::model_spec_to_json(c.model).dump(2).c_str());
            return 0;
        }
        // Step times as the trainer measures them, and (diagnostic, meaningful with --threads 1) the
        // trainer thread's CPU time between consecutive steps, which a busy machine inflates less.
        std::vector<double> step_ms, step_cpu_ms;
        double prev_cpu = -1;
        using Clock = std::chrono::steady_clock;
        Clock::time_point loop_start{}, loop_end{};
        hr::TrainCallbacks cb;
        cb.on_step = [&](const hr::StepEvent& e) {
            loop_end = Clock::now();
            if (step_ms.empty())
                loop_start = loop_end - std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(e.step_seconds));
            step_ms.push_back(1000.0 * e.step_seconds);
            const double now = thread_cpu_ms();
            if (prev_cpu >= 0) step_cpu_ms.push_back(now - prev_cpu);
            prev_cpu = now;
        };
        hr::Trainer t(c, cb);
        hr::TrainResult r = t.run();
        const double loop_seconds = std::chrono::duration<double>(loop_end - loop_start).count();
        // samples trained (an epoch's last batch may be short): images_per_second is samples / summed step time
        double step_seconds = 0;
        for (double ms : step_ms) step_seconds += ms / 1000.0;
        const double samples = std::round(r.images_per_second * step_seconds);
        json out = {{"peer", "headroom"},
                    {"model", c.model.name},
                    {"batch", c.batch},
                    {"threads", c.threads},
                    {"checkpoint", c.strategy.checkpoint},
                    {"status", r.status},
                    {"error", r.error},
                    {"device", r.device_name},
                    {"steps", r.steps},
                    {"images_per_second", r.images_per_second},
                    {"loop_seconds", loop_seconds},
                    {"loop_samples", samples},
                    {"loop_images_per_second", loop_seconds > 0 ? samples / loop_seconds : 0.0},
                    {"median_step_ms", median(step_ms)},
                    {"median_step_cpu_ms", median(step_cpu_ms)},
                    {"step_ms", step_ms},
                    {"test_accuracy", r.test_accuracy},
                    {"train_loss", r.train_loss},
                    {"activations_peak_bytes", hr::at(r.ledger.peak, hr::MemCategory::activations)},
                    {"peak_total_bytes", r.ledger.peak_total}};
        {  // the planner's count of a step's work (forward + backward + recompute; a multiply-add is 2 FLOPs), for the
           // share of the machine's GEMM rate (scripts/bench cpu)
            const hr::MemoryPlan plan = hr::predict_memory(hr::plan_request(c));
            const double flops = plan.forward_flops + plan.backward_flops + plan.recompute_flops;
            out["step_flops"] = flops;
            out["flops_per_image"] = flops / double(c.batch);
        }
        std::printf("%s\n", out.dump().c_str());
        return r.status == "finished" ? 0 : 1;
    } catch (const hr::Error& e) {
        std::fprintf(stderr, "headroom_bench_cpu: %s\n", e.what());
        return 2;
    }
}
