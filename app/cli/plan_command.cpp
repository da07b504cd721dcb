#include "cli/commands.h"

#include <QCoreApplication>
#include <QLocale>
#include <QStringList>
#include <algorithm>
#include <cstdio>

#include "base/error.h"
#include "cli/output.h"
#include "cli/timeline_output.h"
#include "report/plan_table.h"
#include "session/RunText.h"
#include "dist/communicator.h"
#include "train/ranks.h"
#include "train/model_folder.h"
#include "io/hf_folder.h"
#include "memory/allocator.h"
#include "train/device.h"
#include "train/run_record.h"
#include "train/run_summary.h"
#include "train/trainer.h"
#include "nn/compression.h"
#include "nn/transformer_spec.h"

namespace hrapp {

namespace {

QString bytes(std::size_t b) { return q(hr::format_bytes(b)); }

// "1,557,686,400 (1.56 B)": a model's parameter count from its spec (no weights allocated).
QString parameterText(const hr::ModelSpec& spec) {
    const std::int64_t n = hr::analyze_model_spec(spec).total_params;
    const double v = static_cast<double>(n);
    const QString shortForm = v >= 1e9 ? QStringLiteral("%1 B").arg(v / 1e9, 0, 'f', 2)
                              : v >= 1e6 ? QStringLiteral("%1 M").arg(v / 1e6, 0, 'f', 1)
                                         : QStringLiteral("%1 k").arg(v / 1e3, 0, 'f', 1);
    return QStringLiteral("%1 (%2)").arg(QLocale::c().toString(static_cast<qlonglong>(n)), shortForm);
}

// --model-config DIR of a folder with weights: what they hold, from their headers (train/model_folder.h;
// the window's File > Open model folder… shows the same), checked against the model; "" for a config alone.
QString weightsText(const std::string& modelConfig) {
    if (modelConfig.empty() || !hr::is_hf_model_folder(modelConfig)) return {};
    const hr::ModelFolder f = hr::open_model_folder(modelConfig);
    return QCoreApplication::translate("Cli", "Weights in %1: %2 parameters stored as %3 in %4 file(s), %5\n\n")
        .arg(q(modelConfig))
        .arg(f.stored_params)
        .arg(q(f.dtype_text()))
        .arg(f.weight_files.size())
        .arg(bytes(f.stored_bytes));
}

// --prune/--quantize: what the trained weights would take stored so (nn/compression.h), from the shapes.
QString whatIfText(const hr::ModelSpec& spec, const hr::CompressionOptions& o) {
    const hr::CompressionReport r = hr::compression_bytes(spec, o);
    QStringList how;
    if (o.prune > 0)
        how << QCoreApplication::translate("Cli", "%1 % pruned").arg(o.prune * 100, 0, 'g', 3);
    if (o.bits == 8) how << QCoreApplication::translate("Cli", "int8 with a scale per row");
    if (o.bits == 4) how << QCoreApplication::translate("Cli", "int4 with a scale per %1 values").arg(o.group);
    if (o.bits == hr::kQuantNf4)
        how << QCoreApplication::translate("Cli", "nf4 (NormalFloat) with a scale per %1 values, the scales quantised too")
                   .arg(o.group);
    return QCoreApplication::translate("Cli", "\n  what-if (%1): the %2 weight tensors (%3 values) would be stored in at most %4 "
                                              "instead of %5, besides %6 of other tensors; train with the same flags to "
                                              "measure the test accuracy (a language model's validation loss) "
                                              "after\n")
        .arg(how.join(QCoreApplication::translate("Cli", ", ", "between the parts of a list")))
        .arg(r.tensors)
        .arg(QLocale::c().toString(static_cast<qlonglong>(r.values)))
        .arg(bytes(r.stored_bytes), bytes(r.dense_bytes), bytes(r.other_bytes));
}

nlohmann::json whatIfJson(const hr::ModelSpec& spec, const hr::CompressionOptions& o) {
    return hr::compression_counts_json(o, hr::compression_bytes(spec, o));  // counted as run.json's final.compression
}

}  // namespace

QString categoryTable(const hr::CategoryBytes& predicted, const hr::CategoryBytes* measured,
                      const hr::CategoryBytes* host) {
    QString out = QStringLiteral("  %1 %2").arg(QCoreApplication::translate("Cli", "category"), -18).arg(QCoreApplication::translate("Cli", "predicted"), 12);
    if (measured) out += QStringLiteral(" %1 %2").arg(QCoreApplication::translate("Cli", "measured"), 12).arg(QCoreApplication::translate("Cli", "difference"), 11);
    if (host) out += QStringLiteral(" %1").arg(QCoreApplication::translate("Cli", "host"), 12);
    out += QStringLiteral("\n");
    std::size_t tp = 0, tm = 0, th = 0;
    for (hr::MemCategory c : hr::all_categories()) {
        const std::size_t p = hr::at(predicted, c), m = measured ? hr::at(*measured, c) : 0,
                          h = host ? hr::at(*host, c) : 0;
        tp += p, tm += m, th += h;
        if (!p && !m && !h) continue;
        out += QStringLiteral("  %1 %2").arg(q(hr::category_name(c)), -18).arg(bytes(p), 12);
        if (measured)
            out += QStringLiteral(" %1 %2").arg(bytes(m), 12).arg(
                m ? QStringLiteral("%1%").arg(100.0 * (double(p) - double(m)) / double(m), 0, 'f', 2)
                  : QStringLiteral("-"),
                11);
        if (host) out += QStringLiteral(" %1").arg(bytes(h), 12);
        out += QStringLiteral("\n");
    }
    out += QStringLiteral("  %1 %2").arg(QCoreApplication::translate("Cli", "total"), -18).arg(bytes(tp), 12);
    if (measured)
        out += QStringLiteral(" %1 %2").arg(bytes(tm), 12).arg(
            tm ? QStringLiteral("%1%").arg(100.0 * (double(tp) - double(tm)) / double(tm), 0, 'f', 2) : QString(), 11);
    if (host) out += QStringLiteral(" %1").arg(bytes(th), 12);
    out += QStringLiteral("\n");
    return out;
}

namespace {

// A language model within a budget (issue 46): the asked configuration's categories, the largest batch and
// the longest sequence that fit with its strategies, and the fine-tuning table (report/plan_table.h).
void fineTuningPlan(const hr::PlanRequest& req, std::size_t budget) {
    auto fits = [&](const hr::PlanRequest& r) {
        try {
            return hr::plan_fit_bytes(hr::predict_memory(r)) <= budget;
        } catch (const hr::Error&) {
            return false;
        }
    };
    const hr::MemoryPlan asked = hr::predict_memory(req);
    print(QCoreApplication::translate("Cli", "As asked (batch %1, %2): %3 of %4, %5\n")
              .arg(req.batch)
              .arg(q(asked.strategy.describe()))
              .arg(bytes(hr::plan_fit_bytes(asked)), bytes(budget))
              .arg(hr::plan_fit_bytes(asked) <= budget ? QCoreApplication::translate("Cli", "fits")
                                                       : QCoreApplication::translate("Cli", "does NOT fit")));
    print(categoryTable(asked.device, nullptr, asked.host_total ? &asked.host : nullptr));
    // the largest batch (doubling, then halving the gap) and the longest sequence with these strategies
    auto largest = [&](std::int64_t lo, std::int64_t cap, auto&& with) -> std::int64_t {
        if (!fits(with(lo))) return 0;
        std::int64_t hi = lo;
        while (hi < cap && fits(with(std::min(cap, hi * 2)))) hi = std::min(cap, hi * 2);
        std::int64_t bad = std::min(cap, hi * 2);
        if (hi == cap) return cap;
        while (bad - hi > 1) {
            const std::int64_t mid = hi + (bad - hi) / 2;
            (fits(with(mid)) ? hi : bad) = mid;
        }
        return hi;
    };
    const std::int64_t batch = largest(1, std::int64_t{1} << 20, [&](std::int64_t b) {
        hr::PlanRequest r = req;
        r.batch = b;
        r.strategy.micro_batch = 0;
        r.strategy.accumulate = 1;
        return r;
    });
    const std::int64_t maxSeq = std::max<std::int64_t>(1, hr::model_max_positions(req.spec));
    const std::int64_t seq = largest(1, maxSeq, [&](std::int64_t t) {
        hr::PlanRequest r = req;
        r.seq = t;
        return r;
    });
    print(QCoreApplication::translate("Cli", "Largest batch that fits at sequence %1: %2; longest sequence at batch %3: %4 (the model's limit %5)\n\n")
              .arg(hr::model_sequence_length([&] {
                  hr::ModelSpec s = req.spec;
                  hr::apply_sequence_length(s, req.seq);
                  return s;
              }()))
              .arg(batch)
              .arg(req.batch)
              .arg(seq)
              .arg(maxSeq));
    print(QCoreApplication::translate("Cli", "Fine-tuning on 1 to 8 cards of %1 each (per-card memory at this batch, sequence and precision, from the same search as --all;\n"
                                      "checkpointing \"on\" is %2; ZeRO-3 on 1 card keeps the parameters in host memory; \"(over)\": does not fit;\n"
                                      "\"-\": no such configuration):\n\n")
              .arg(bytes(budget))
              .arg(req.strategy.checkpoint == "every:2" ? QStringLiteral("--checkpoint every:2") : QStringLiteral("--checkpoint all")));
    print(fineTuningTable(req, budget) + QLatin1Char('\n'));
}

}  // namespace

int runPlanCommand(const CliRequest& request) {
    CliRequest flags = request;
    try {
        resolveModel(flags);
        const hr::TrainConfig& c = flags.config;
        hr::validate_train_config(c);
        hr::PlanRequest req = hr::plan_request(c);
        if (flags.ranks > 1) {  // what-if: N ranks, without the devices; CPU ranks share this machine's cores
            req.world_size = flags.ranks;
            hr::RankEnvironment env = hr::rank_environment();
            env.local_size = flags.ranks;
            req.threads = hr::rank_threads(c.threads, flags.ranks, c.device, env);
        }
        // the spec as planned (a language model at --seq): for the lines that describe it
        hr::PlanRequest planned = req;
        hr::apply_sequence_length(planned.spec, planned.seq);
        const std::size_t free = hr::device_free_bytes(req.device);
        if (flags.budget.isEmpty()) {
            hr::MemoryPlan p = hr::predict_memory(req);
            if (!flags.trace.isEmpty()) {  // before anything is printed: a bad path is the one message
                QString error;
                if (!writeTimelineTrace(flags.trace, p.timeline, Cli::tr("predicted"), &error)) {
                    eprint(Cli::tr("headroom plan: %1\n").arg(error));
                    return 2;
                }
            }
            if (flags.json) {
                nlohmann::json j = hr::plan_to_json(p);
                j["device_name"] = req.device;
                j["device_free"] = free;
                j["fits"] = hr::plan_fit_bytes(p) <= free;
                j["param_count"] = hr::analyze_model_spec(planned.spec).total_params;
                j["seq"] = hr::model_sequence_length(planned.spec);
                if (c.what_if.active()) j["compression"] = whatIfJson(planned.spec, c.what_if);
                if (flags.timeline) j["timeline"] = hr::step_timeline_summary_json(p.timeline);
                print(q(j.dump(2) + "\n"));
                return 0;
            }
            print(QCoreApplication::translate("Cli", "Model %1, batch %2 (micro-batch %3 x %4), %5, device %6\n\n")
                      .arg(q(c.model.name))
                      .arg(c.batch)
                      .arg(p.strategy.micro_batch)
                      .arg(p.strategy.accumulate)
                      .arg(q(p.strategy.describe()), q(req.device)));
            if (p.world_size > 1) {
                print(QCoreApplication::translate("Cli", "%1 ranks, %2; the table is rank %3 (the one that needs the "
                                                         "most); communication %4 per step\n")
                          .arg(p.world_size)
                          .arg(p.strategy.pipeline > 1   ? QCoreApplication::translate("Cli", "pipeline stages")
                               : p.strategy.tp_head > 1 ? QCoreApplication::translate("Cli", "tensor-parallel head")
                                                        : q(hr::shard_stage_name(p.strategy.shard)))
                          .arg(p.rank)
                          .arg(bytes(static_cast<std::size_t>(p.communication_bytes))));
                const auto& first = p.strategy.stage_first;
                // a pipeline: rank r is stage r / D of data-parallel replica r % D (D = 1: each rank a stage)
                const int D = p.strategy.pipeline > 1 ? p.world_size / p.strategy.pipeline : 1;
                for (const hr::RankPlan& rp : p.ranks) {
                    const std::size_t st = static_cast<std::size_t>(rp.rank / D);
                    if (!p.stage_layers.empty() && D > 1)
                        print(QCoreApplication::translate("Cli", "  rank %1: stage %2 of replica %3, layers %4-%5, device %6, host %7\n")
                                  .arg(rp.rank)
                                  .arg(st)
                                  .arg(rp.rank % D)
                                  .arg(first[st])
                                  .arg(first[st + 1] - 1)
                                  .arg(bytes(rp.device_total), bytes(rp.host_total)));
                    else if (!p.stage_layers.empty())
                        print(QCoreApplication::translate("Cli", "  rank %1: stage %1, layers %2-%3, device %4, host %5\n")
                                  .arg(rp.rank)
                                  .arg(first[st])
                                  .arg(first[st + 1] - 1)
                                  .arg(bytes(rp.device_total), bytes(rp.host_total)));
                    else
                        print(QCoreApplication::translate("Cli", "  rank %1: batch %2, device %3, host %4\n")
                                  .arg(rp.rank)
                                  .arg(rp.batch)
                                  .arg(bytes(rp.device_total), bytes(rp.host_total)));
                }
                if (!p.stage_layers.empty())
                    print(QCoreApplication::translate("Cli", "  pipeline bubble %1 % with %2 micro-batches (1F1B: (K - 1) / (m + "
                                                             "K - 1)); splits that balance the estimated time: "
                                                             "--pipeline-split %3, the memory: --pipeline-split %4\n")
                              .arg(100.0 * p.pipeline_bubble, 0, 'f', 1)
                              .arg(p.strategy.accumulate)
                              .arg(q(p.split_by_time), q(p.split_by_memory)));
                print(QStringLiteral("\n"));
            }
            if (const std::int64_t T = hr::model_sequence_length(planned.spec); T > 0)
                print(QCoreApplication::translate("Cli", "Language model: sequence %1 tokens, %2 x %1 = %3 tokens per step, %4 parameters\n\n")
                          .arg(T)
                          .arg(c.batch)
                          .arg(c.batch * T)
                          .arg(parameterText(planned.spec)));
            print(weightsText(flags.modelConfig));
            if (p.device_defaults)
                print(QCoreApplication::translate("Cli", "Device figures: %1\n\n").arg(hrapp::messageText(p.device_note)));
            print(categoryTable(p.device, nullptr, p.host_total ? &p.host : nullptr));
            const bool fits = hr::plan_fit_bytes(p) <= free;
            const QString verdict = fits ? QCoreApplication::translate("Cli", "fits") : QCoreApplication::translate("Cli", "does NOT fit");
            if (p.device_overhead > 0) {
                // a GPU: what the driver will see, the ledger's figure is only part of it (planner.h)
                print(QCoreApplication::translate("Cli", "\n  the driver will see %1 per process: %2 reserved by the caching "
                                                         "allocator for the ledger's %3, and %4 outside the ledger "
                                                         "(the CUDA context and the cuBLAS/cuDNN handles %5")
                          .arg(bytes(p.process_total), bytes(p.device_reserved), bytes(p.device_total),
                               bytes(p.device_overhead), bytes(p.device_overhead - p.communication_overhead)));
                if (p.communication_overhead > 0)
                    print(QCoreApplication::translate("Cli", ", NCCL %1 %2")
                              .arg(bytes(p.communication_overhead),
                                   p.communication_overhead_measured
                                       ? QCoreApplication::translate("Cli", "as an earlier run on this GPU measured it")
                                       : QCoreApplication::translate("Cli", "estimated from NCCL's default buffers until a "
                                                                            "run measures it")));
                print(QStringLiteral(")\n"));
                print(QCoreApplication::translate("Cli", "  %1 with a 5 % margin, of %2 free on %3: %4\n")
                          .arg(bytes(hr::plan_fit_bytes(p)), bytes(free), q(req.device), verdict));
            } else {
                print(QCoreApplication::translate("Cli", "\n  %1 of %2 free on %3: %4\n")
                          .arg(bytes(p.device_total), bytes(free), q(req.device), verdict));
            }
            if (p.dataset_bytes > 0)
                print(QCoreApplication::translate("Cli", "  the data set %1 takes %2 of host RAM (%3 training and %4 test samples), "
                                                         "besides the loader's buffers (data above)\n")
                          .arg(q(c.data), bytes(p.dataset_bytes))
                          .arg(req.train_samples)
                          .arg(req.test_samples));
            if (c.what_if.active()) print(whatIfText(planned.spec, c.what_if));
            print(QCoreApplication::translate("Cli", "\nPer layer (bytes kept for backward at micro-batch %1; * marks checkpointed blocks, whose "
                     "inner tensors are recomputed in a shared %2 buffer):\n")
                      .arg(p.strategy.micro_batch)
                      .arg(bytes(p.recompute_arena)));
            print(QStringLiteral("  %1 %2 %3 %4 %5\n")
                      .arg(QCoreApplication::translate("Cli", "layer"), -14)
                      .arg(QCoreApplication::translate("Cli", "type"), -28)
                      .arg(QCoreApplication::translate("Cli", "block"), 6)
                      .arg(QCoreApplication::translate("Cli", "activations"), 12)
                      .arg(QCoreApplication::translate("Cli", "parameters"), 12));
            for (const auto& l : p.layers)
                print(QStringLiteral("  %1 %2 %3 %4 %5\n")
                          .arg(q(l.path), -14)
                          .arg(q(l.label), -28)
                          .arg(l.block >= 0 ? QString::number(l.block) + (l.checkpointed ? QStringLiteral("*") : QString())
                                            : QString(),
                               6)
                          .arg(bytes(l.activation_bytes), 12)
                          .arg(bytes(l.parameter_bytes), 12));
            print(QCoreApplication::translate("Cli", "\nPeak: %1\nPredicted step: %2 ms (%3x the fp32 step without strategies; %4 recomputed "
                     "forward FLOPs, %5 host traffic: %6 ms at %7/s)\n")
                      .arg(q(p.peak_phase))
                      .arg(p.predicted_step_seconds * 1e3, 0, 'f', 2)
                      .arg(p.relative_step_time, 0, 'f', 2)
                      .arg(p.recompute_flops, 0, 'g', 3)
                      .arg(bytes(static_cast<std::size_t>(p.offload_bytes)))
                      .arg(p.offload_seconds * 1e3, 0, 'f', 2)
                      .arg(bytes(static_cast<std::size_t>(p.host_link))));
            if (flags.timeline) print(QStringLiteral("\n") + timelineText(p.timeline));
            if (!flags.trace.isEmpty()) print(Cli::tr("wrote the step's predicted timeline to %1\n").arg(flags.trace));
            return 0;
        }
        const std::size_t budget = flags.budget == QLatin1String("device") ? free : hr::parse_bytes(flags.budget.toStdString());
        if (!flags.json && hr::is_token_model(c.model)) fineTuningPlan(req, budget);
        hr::PlanSearch s = hr::search_plans(req, budget);
        const bool defaults = !s.candidates.empty() && s.candidates.front().plan.device_defaults;
        if (flags.json) {
            nlohmann::json j;
            j["budget"] = budget;
            j["param_count"] = hr::analyze_model_spec(planned.spec).total_params;
            j["seq"] = hr::model_sequence_length(planned.spec);
            j["device_defaults"] = defaults;
            j["best"] = s.best;
            if (c.what_if.active()) j["compression"] = whatIfJson(planned.spec, c.what_if);
            nlohmann::json arr = nlohmann::json::array();
            for (const auto& cand : s.candidates) {
                nlohmann::json e = hr::plan_to_json(cand.plan);
                e["flags"] = hr::strategy_flags(cand.strategy);
                e["fits"] = cand.fits;
                e["reason"] = cand.reason;
                arr.push_back(e);
            }
            j["candidates"] = arr;
            print(q(j.dump(2) + "\n"));
            return s.best >= 0 ? 0 : 1;
        }
        print(QCoreApplication::translate("Cli", "Configurations for %1 at batch %2 within %3 (fastest first; * marks the best):\n\n")
                  .arg(q(c.model.name))
                  .arg(c.batch)
                  .arg(bytes(budget)));
        if (const std::int64_t T = hr::model_sequence_length(planned.spec); T > 0)
            print(QCoreApplication::translate("Cli", "Language model: sequence %1 tokens, %2 x %1 = %3 tokens per step, %4 parameters\n\n")
                      .arg(T)
                      .arg(c.batch)
                      .arg(c.batch * T)
                      .arg(parameterText(planned.spec)));
        print(weightsText(flags.modelConfig));
        if (defaults)
            print(QCoreApplication::translate("Cli", "Device figures: %1\n\n").arg(hrapp::messageText(s.candidates.front().plan.device_note)));
        // the front of memory against speed (every candidate with --all, or when nothing fits), aligned
        // in either language (app/report/plan_table)
        print(planSearchTable(s, flags.all || s.best < 0));  // says what it leaves out, and --all
        if (s.best < 0) {
            if (c.what_if.active()) print(whatIfText(planned.spec, c.what_if));
            if (s.ranks_needed > 0)  // sharded over more ranks it would: "needs 4 GPUs: with --ranks 4 ..."
                print(QCoreApplication::translate("Cli", "\nNothing fits in %1 as set up; sharded, it %2.\n")
                          .arg(bytes(budget), messageText(s.ranks_reason)));
            else
                print(QCoreApplication::translate("Cli", "\nNothing fits in %1: lower --batch or use a smaller model.\n").arg(bytes(budget)));
            return 1;
        }
        const auto& best = s.candidates[static_cast<std::size_t>(s.best)];
        print(QCoreApplication::translate("Cli", "\nBest: headroom train --batch %1 %2\n").arg(c.batch).arg(q(hr::strategy_flags(best.strategy))));
        if (c.what_if.active()) print(whatIfText(planned.spec, c.what_if));
        return 0;
    } catch (const hr::InputError& e) {
        eprint(QCoreApplication::translate("Cli", "headroom plan: %1\n").arg(messageText(e.message())));
        return 2;
    } catch (const std::exception& e) {
        eprint(QCoreApplication::translate("Cli", "headroom plan: %1\n").arg(q(e.what())));
        return 1;
    }
}

}  // namespace hrapp
