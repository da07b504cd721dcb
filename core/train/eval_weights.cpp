#include "train/eval_weights.h"

#include <cmath>
#include <cstdio>

#include "backend/cpu/cpu_backend.h"
#include "base/error.h"
#include "data/dataset.h"
#include "data/loader.h"
#include "nn/model.h"
#include "nn/transformer_spec.h"
#include "train/device.h"
#include "train/events.h"
#include "train/resume.h"
#include "train/result.h"

namespace hr {

WeightsEvaluation evaluate_weights(const TrainConfig& c, const std::string& weights_path,
                                   const CompressionOptions& compression) {
    validate_model_spec(c.model);
    validate_compression(compression);
    if (is_token_model(c.model))
        throw InputError(HR_MSG("eval.token_model", "headroom eval measures image classifiers; '%1' is a language "
                                                    "model (its validation loss is in run.json)"),
                         {c.model.name});
    auto ledger = std::make_shared<MemoryLedger>();
    Message note;
    std::unique_ptr<Backend> be = make_backend(c.device, c.threads, ledger, false, &note);
    DataOptions dopt;
    dopt.train_limit = 1;  // only the test split is used (normalisation comes from the dataset's own figures)
    dopt.test_limit = c.test_limit;
    dopt.target = c.target;
    DatasetPair data = load_dataset(c.data, dopt);
    const Dataset& test = data.test;
    if (test.sample_shape != c.model.input_shape)
        throw InputError(HR_MSG("eval.shape", "the model expects samples of shape %1 but '%2' has %3; pick the model "
                                              "the weights were trained for (--preset or --model)"),
                         {shape_str(c.model.input_shape), c.data, shape_str(test.sample_shape)});
    if (test.num_classes != c.model.num_classes)
        throw InputError(HR_MSG("eval.classes", "the model has %1 classes but '%2' has %3; pick the model the weights "
                                                "were trained for"),
                         {std::to_string(c.model.num_classes), c.data, std::to_string(test.num_classes)});
    if (test.count < 1)
        throw InputError(HR_MSG("eval.no_test", "dataset '%1' has no test samples to evaluate on"), {c.data});
    const std::int64_t M = std::max<std::int64_t>(1, std::min<std::int64_t>(c.batch, test.count));
    ModelOptions mo;
    mo.batch = M;
    mo.seed = c.seed;
    Model model(c.model, *be, mo);
    WeightsEvaluation out;
    out.notes = describe_weights_match(load_weights_into(model, weights_path));
    out.device_name = be->name();
    DataLoader loader(test, M, false, c.seed, false, data.train.norm_mean, data.train.norm_std, ledger.get());
    const std::int64_t per = shape_numel(c.model.input_shape);
    Shape xs{M};
    for (auto d : c.model.input_shape) xs.push_back(d);
    Tensor x = Tensor::empty(be->allocator(), xs, DType::f32, MemCategory::data);
    Tensor y = Tensor::empty(be->allocator(), {M}, DType::i64, MemCategory::data);
    (void)per;
    // one pass over the test split: (loss, accuracy, samples)
    auto evaluate = [&](double& loss, double& accuracy) {
        double loss_sum = 0;
        std::int64_t correct = 0, seen = 0;
        loader.start_epoch(0);
        Batch b;
        Tensor none;
        while (loader.next(b)) {
            Tensor xb = x.slice0(0, b.size), yb = y.slice0(0, b.size);
            be->copy_from_host(b.images.data(), xb);
            be->copy_from_host(b.labels.data(), yb);
            Tensor logits = model.forward(xb, false);
            const LossResult r = be->softmax_cross_entropy(logits, yb, 0.0f, none, 1.0f);
            loss_sum += r.loss * static_cast<double>(b.size);
            correct += r.correct;
            seen += b.size;
        }
        loss = loss_sum / static_cast<double>(seen);
        accuracy = static_cast<double>(correct) / static_cast<double>(seen);
        return seen;
    };
    out.test_samples = evaluate(out.test_loss, out.test_accuracy);
    if (compression.active()) {
        out.compression = compress_model_weights(model, compression);
        out.compressed = true;
        out.options = compression;
        evaluate(out.test_loss_after, out.test_accuracy_after);
    }
    return out;
}

void evaluate_what_if(const TrainConfig& config, const std::string& weights_path, TrainResult& result,
                      const RunLog& log) {
    if (!config.what_if.active()) return;
    TrainConfig c = config;
    // several ranks: the other ranks' processes still hold their devices; one CPU evaluation is enough
    if (result.world_size > 1) c.device = "cpu";
    const CompressionOptions& o = config.what_if;
    char pct[32];
    std::snprintf(pct, sizeof pct, "%.1f", 100.0 * o.prune);
    const std::string q = quantize_name(o.bits), group = std::to_string(o.group);
    if (o.bits == 0)
        log(LogLevel::info, Message(HR_MSG("whatif.prune", "What-if: evaluating the written weights on the test split as "
                                                           "trained and with %1 % of each weight tensor's smallest "
                                                           "values set to zero"),
                                    {pct}));
    else if (o.prune <= 0)
        log(LogLevel::info, Message(HR_MSG("whatif.quantize", "What-if: evaluating the written weights on the test split "
                                                              "as trained and stored as %1 (int8: a scale per output "
                                                              "row; int4: a scale per %2 values)"),
                                    {q, group}));
    else
        log(LogLevel::info, Message(HR_MSG("whatif.both", "What-if: evaluating the written weights on the test split as "
                                                          "trained and with %1 % of each weight tensor's smallest values "
                                                          "set to zero, then stored as %2 (int8: a scale per output "
                                                          "row; int4: a scale per %3 values)"),
                                    {pct, q, group}));
    result.what_if = evaluate_weights(c, weights_path, config.what_if);
    const WeightsEvaluation& e = result.what_if;
    const CompressionReport& r = e.compression;
    char acc[3][32];
    std::snprintf(acc[0], sizeof acc[0], "%.2f %%", 100.0 * e.test_accuracy);
    std::snprintf(acc[1], sizeof acc[1], "%.2f %%", 100.0 * e.test_accuracy_after);
    std::snprintf(acc[2], sizeof acc[2], "%+.2f", 100.0 * (e.test_accuracy_after - e.test_accuracy));
    log(LogLevel::info,
        Message(HR_MSG("whatif.result", "What-if: test accuracy %1 as trained, %2 after (%3 points) on %4 samples; the "
                                        "weights take %5 stored so instead of %6"),
                {acc[0], acc[1], acc[2], std::to_string(e.test_samples), format_bytes(r.stored_bytes + r.other_bytes),
                 format_bytes(r.dense_bytes + r.other_bytes)}));
}

}  // namespace hr
