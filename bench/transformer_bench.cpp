// transformer_bench: Headroom's side of scripts/bench transformer (bench/transformer.sh). Not a test: it
// trains a language model with the real trainer and prints one JSON object on stdout (progress on
// stderr). It links headroom_core only, so it needs neither Qt nor the CLI's flags.
//
//   transformer_bench [--preset gpt-char] [--model FILE.json] [--data text:fortunes] [--batch 8] [--seq 256]
//                     [--steps 12] [--warmup 2] [--threads 2] [--device cpu] [--precision fp32]
//                     [--checkpoint none] [--accumulate 1] [--lr 1e-3] [--tokenizer byte] [--sample N]
//                     [--print-spec]
//
// loop_seconds is the training loop's wall time (all steps, the first included; loop_tokens_per_second from
// it). Step time is the trainer's own (batch upload, forward, loss, backward, optimizer; StepEvent.step_seconds),
// averaged over the steps after --warmup. Memory is the ledger's peak per category. --sample N also
// generates N tokens from the trained weights (greedy) with a prompt of "\n". --print-spec prints the
// model spec (with --seq applied) and exits: what the PyTorch peer builds.
#include <time.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <numeric>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "base/error.h"
#include "nn/transformer_spec.h"
#include "plan/plan_request.h"
#include "train/generate.h"
#include "train/trainer.h"

using json = nlohmann::json;

int main(int argc, char** argv) {
    std::string preset = "gpt-char", model_file, data = "text:fortunes", device = "cpu", precision = "fp32",
                checkpoint = "none", tokenizer = "byte";
    long long batch = 8, seq = 256, steps = 12, warmup = 2, accumulate = 1, sample = 0;
    bool print_spec = false;
    int threads = 2;
    double lr = 1e-3;
    for (int i = 1; i < argc; ++i) {
        const std::string a = argv[i];
        auto next = [&]() -> std::string {
            if (i + 1 >= argc) {
                std::fprintf(stderr, "transformer_bench: %s needs a value\n", a.c_str());
                std::exit(2);
            }
            return argv[++i];
        };
        if (a == "--preset") preset = next();
        else if (a == "--model") model_file = next();
        else if (a == "--data") data = next();
        else if (a == "--batch") batch = std::stoll(next());
        else if (a == "--seq") seq = std::stoll(next());
        else if (a == "--steps") steps = std::stoll(next());
        else if (a == "--warmup") warmup = std::stoll(next());
        else if (a == "--threads") threads = std::stoi(next());
        else if (a == "--device") device = next();
        else if (a == "--precision") precision = next();
        else if (a == "--checkpoint") checkpoint = next();
        else if (a == "--accumulate") accumulate = std::stoll(next());
        else if (a == "--lr") lr = std::stod(next());
        else if (a == "--tokenizer") tokenizer = next();
        else if (a == "--sample") sample = std::stoll(next());
        else if (a == "--print-spec") print_spec = true;
        else {
            std::fprintf(stderr, "transformer_bench: unknown argument %s\n", a.c_str());
            return 2;
        }
    }
    try {
        hr::TrainConfig c;
        c.model = model_file.empty() ? hr::preset_model(preset) : hr::load_model_spec(model_file);
        if (print_spec) {  // the model (with --seq applied) for the PyTorch peer
            hr::ModelSpec s = c.model;
            hr::apply_sequence_length(s, seq);
            std::printf("%s\n", hr::model_spec_to_json(s).dump().c_str());
            return 0;
        }
        c.model_source = model_file.empty() ? "preset:" + preset : "file:" + model_file;
        c.data = data;
        c.batch = batch;
        c.seq = seq;
        c.steps = steps;
        c.threads = threads;
        c.device = device;
        c.seed = 1;
        c.tokenizer = tokenizer;
        c.optimizer.kind = "adamw";
        c.optimizer.lr = lr;
        c.optimizer.beta2 = 0.99;
        c.optimizer.weight_decay = 0.1;
        c.optimizer.grad_clip = 1.0;
        c.schedule.kind = "cosine";  // with a warm-up of 5% of the steps, as nanoGPT
        c.schedule.warmup_steps = std::max<long long>(1, steps / 20);
        c.schedule.min_lr = lr / 10;
        c.strategy.precision = precision;
        c.strategy.checkpoint = checkpoint;
        c.strategy.accumulate = accumulate;
        c.eval_tokens = seq * batch;  // the final validation loss only, over one batch worth of tokens
        c.memory_events_per_second = 1;
        std::vector<double> step_s, cpu_s;
        std::vector<double> losses;
        // process CPU time between step events: on a busy machine a better measure of the work than wall time
        // (with one thread; with more it also counts OpenMP's waiting threads)
        auto cpu_now = [] {
            timespec ts{};
            clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
            return double(ts.tv_sec) + 1e-9 * double(ts.tv_nsec);
        };
        double last_cpu = 0;
        // the training loop's wall time, from the first step's start to the last step's end
        using Clock = std::chrono::steady_clock;
        Clock::time_point loop_start{}, loop_end{};
        hr::TrainCallbacks cb;
        cb.on_step = [&](const hr::StepEvent& e) {
            loop_end = Clock::now();
            if (step_s.empty())
                loop_start = loop_end - std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(e.step_seconds));
            const double now = cpu_now();
            if (e.step > 1) cpu_s.push_back(now - last_cpu);
            last_cpu = now;
            step_s.push_back(e.step_seconds);
            losses.push_back(e.loss);
            std::fprintf(stderr, "step %lld/%lld: loss %.4f, %.1f ms\n", static_cast<long long>(e.step),
                         static_cast<long long>(e.total_steps), e.loss, 1000 * e.step_seconds);
        };
        if (sample > 0) cb.on_snapshot = [](std::shared_ptr<const hr::WeightsSnapshot>) {};  // keep the final weights
        hr::Trainer t(c, cb);
        const hr::TrainResult r = t.run();
        if (r.status != "finished") {
            json j = {{"error", r.error}, {"status", r.status}};
            std::printf("%s\n", j.dump().c_str());
            return 1;
        }
        std::vector<double> timed(step_s.begin() + std::min<std::size_t>(step_s.size() - 1, warmup), step_s.end());
        const double mean = std::accumulate(timed.begin(), timed.end(), 0.0) / double(timed.size());
        std::vector<double> sorted = timed;
        std::sort(sorted.begin(), sorted.end());
        json j;
        j["model"] = c.model.name;
        j["params"] = r.param_count;
        j["device"] = r.device_name;
        j["batch"] = batch;
        j["seq"] = seq;
        j["precision"] = precision;
        j["checkpoint"] = checkpoint;
        j["accumulate"] = accumulate;
        j["steps"] = steps;
        j["timed_steps"] = timed.size();
        j["step_ms"] = 1000 * mean;
        j["step_ms_median"] = 1000 * sorted[sorted.size() / 2];
        j["tokens_per_second"] = double(batch * seq) / mean;
        const double loop_seconds = std::chrono::duration<double>(loop_end - loop_start).count();
        j["loop_seconds"] = loop_seconds;
        j["loop_tokens_per_second"] = loop_seconds > 0 ? double(batch * seq * steps) / loop_seconds : 0.0;
        {  // the planner's count of a step's work (forward + backward + recompute; a multiply-add is 2 FLOPs), for the
           // share of the machine's GEMM rate (scripts/bench cpu)
            const hr::MemoryPlan plan = hr::predict_memory(hr::plan_request(c));
            const double flops = plan.forward_flops + plan.backward_flops + plan.recompute_flops;
            j["step_flops"] = flops;
            j["flops_per_token"] = flops / double(batch * seq);
        }
        if (!cpu_s.empty()) {
            std::vector<double> c2(cpu_s.begin() + std::min<std::size_t>(cpu_s.size() - 1, warmup > 0 ? warmup - 1 : 0),
                                   cpu_s.end());
            std::sort(c2.begin(), c2.end());
            j["step_cpu_ms_median"] = 1000 * c2[c2.size() / 2];
        }
        j["loss_first"] = losses.front();
        j["loss_last"] = losses.back();
        j["test_loss"] = r.test_loss;
        j["peak_total"] = r.ledger.peak_total;
        j["activations"] = hr::at(r.ledger.peak, hr::MemCategory::activations);
        j["workspace"] = hr::at(r.ledger.peak, hr::MemCategory::workspace);
        j["strategy"] = r.strategy;
        // the planner's prediction for the same run, beside the ledger's peak (scripts/gpu-check's memory figures)
        try {
            const hr::MemoryPlan p = hr::predict_memory(hr::plan_request(c, r.train_samples, r.test_samples));
            j["planner_device_total_bytes"] = p.device_total;
            j["planner_device_reserved_bytes"] = p.device_reserved;
            j["planner_device_overhead_bytes"] = p.device_overhead;
            j["planner_process_total_bytes"] = p.process_total;
        } catch (const hr::Error& e) {
            j["planner_error"] = e.what();
        }
        if (sample > 0) {
            auto snap = t.latest_snapshot();
            auto g = hr::Generator::from_snapshot(*snap, threads);
            hr::GenerateOptions o;
            o.prompt = "\n";
            o.tokens = sample;
            o.temperature = 0;
            const hr::GenerateResult res = g->generate(o);
            j["sample"] = res.text;
            j["sample_tokens_per_second"] = res.tokens_per_second;
        }
        std::printf("%s\n", j.dump().c_str());
        return 0;
    } catch (const hr::Error& e) {
        json j = {{"error", e.what()}, {"status", "failed"}};
        std::printf("%s\n", j.dump().c_str());
        return 2;
    }
}
