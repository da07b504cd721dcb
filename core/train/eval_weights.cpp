#include "train/eval_weights.h"

#include <cmath>
#include <cstdio>
#include <filesystem>
#include <functional>

#include "backend/cpu/cpu_backend.h"
#include "base/error.h"
#include "data/dataset.h"
#include "data/loader.h"
#include "data/text_data.h"
#include "data/tokenizer.h"
#include "io/safetensors.h"
#include "nn/model.h"
#include "nn/transformer_spec.h"
#include "train/device.h"
#include "train/events.h"
#include "train/resume.h"
#include "train/result.h"

namespace hr {

namespace {

// One pass over the evaluation data.
struct Pass {
    double loss = 0, accuracy = 0;  // mean per sample (per token), share right (next tokens predicted)
    std::int64_t samples = 0, tokens = 0;
};

// The weights as they are, then (with a what-if) pruned/quantised in place and evaluated again.
void evaluate_as_trained_and_after(Model& model, const CompressionOptions& compression,
                                   const std::function<Pass()>& pass, WeightsEvaluation& out) {
    const Pass before = pass();
    out.test_loss = before.loss;
    out.test_accuracy = before.accuracy;
    out.test_samples = before.samples;
    out.test_tokens = before.tokens;
    if (compression.active()) {
        out.compression = compress_model_weights(model, compression);
        out.compressed = true;
        out.options = compression;
        const Pass after = pass();
        out.test_loss_after = after.loss;
        out.test_accuracy_after = after.accuracy;
    }
}

// An image classifier on its dataset's test split.
WeightsEvaluation evaluate_image_weights(const TrainConfig& c, const std::string& weights_path,
                                         const CompressionOptions& compression) {
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
    for (std::string& line : describe_weights_match(load_weights_into(model, weights_path)))
        out.notes.push_back(Message::plain(std::move(line)));
    out.device_name = be->name();
    DataLoader loader(test, M, false, c.seed, false, data.train.norm_mean, data.train.norm_std, ledger.get());
    Shape xs{M};
    for (auto d : c.model.input_shape) xs.push_back(d);
    Tensor x = Tensor::empty(be->allocator(), xs, DType::f32, MemCategory::data);
    Tensor y = Tensor::empty(be->allocator(), {M}, DType::i64, MemCategory::data);
    evaluate_as_trained_and_after(model, compression, [&] {
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
        Pass p;
        p.loss = loss_sum / static_cast<double>(seen);
        p.accuracy = static_cast<double>(correct) / static_cast<double>(seen);
        p.samples = seen;
        return p;
    }, out);
    return out;
}

// A language model on its corpus's validation split: the consecutive windows a run evaluates (train/
// token_workload.cpp), the loss per token, and the share of next tokens predicted (argmax).
WeightsEvaluation evaluate_token_weights(const TrainConfig& c, const std::string& weights_path,
                                         const CompressionOptions& compression) {
    SafeTensorsFile file = read_safetensors(weights_path);
    WeightsEvaluation out;
    ModelSpec spec = c.model;
    apply_sequence_length(spec, c.seq);
    const std::int64_t T = spec.input_shape[0], V = model_vocabulary(spec);
    TextCorpus corpus = load_text_corpus(c.data);
    // the tokenizer the weights name (next to them, as a run writes it and generate reads it); a file
    // without one (another program's): --tokenizer, built from the corpus as a run builds it
    std::unique_ptr<Tokenizer> tokenizer;
    if (auto it = file.metadata.find("tokenizer"); it != file.metadata.end()) {
        const std::string dir = std::filesystem::path(weights_path).parent_path().string();
        tokenizer = load_tokenizer(it->second, dir.empty() ? "." : dir);
    } else {
        validate_tokenizer_spec(c.tokenizer);
        tokenizer = corpus_tokenizer(c.tokenizer, corpus);
        out.notes.push_back(Message(HR_MSG("eval.tokenizer_built",
                                           "%1 names no tokenizer: the %2 tokenizer was built from %3 as a run builds it"),
                                    {weights_path, tokenizer->kind(), c.data}));
    }
    if (tokenizer->vocab_size() > V)
        throw InputError(HR_MSG("eval.vocab", "the %1 tokenizer has %2 tokens but model '%3' has a vocabulary of %4; "
                                              "pick the model the weights were trained for"),
                         {tokenizer->kind(), std::to_string(tokenizer->vocab_size()), spec.name, std::to_string(V)});
    std::vector<std::int32_t> tokens = tokenizer->encode(corpus.validation_text);
    if (c.test_limit > 0 && static_cast<std::int64_t>(tokens.size()) > c.test_limit)
        tokens.resize(static_cast<std::size_t>(c.test_limit));
    auto ledger = std::make_shared<MemoryLedger>();
    Message note;
    std::unique_ptr<Backend> be = make_backend(c.device, c.threads, ledger, false, &note);
    // windows per forward: the run's micro-batch (its logits, rows x T x V floats, are the largest buffer)
    const std::int64_t M = std::max<std::int64_t>(
        1, c.strategy.micro_batch > 0 ? std::min(c.batch, c.strategy.micro_batch) : c.batch);
    TokenBatcher batcher(tokens, M, T, c.seed, ledger.get(), "validation");  // InputError: too few tokens
    const std::int64_t windows = batcher.eval_windows(c.eval_tokens);
    ModelOptions mo;
    mo.batch = M;
    mo.seed = c.seed;
    Model model(spec, *be, mo);
    for (std::string& line : describe_weights_match(load_weights_into(model, std::move(file), weights_path)))
        out.notes.push_back(Message::plain(std::move(line)));
    out.device_name = be->name();
    out.language_model = true;
    out.tokenizer = tokenizer->kind();
    Tensor x = Tensor::empty(be->allocator(), {M, T}, DType::i64, MemCategory::data);
    Tensor y = Tensor::empty(be->allocator(), {M, T}, DType::i64, MemCategory::data);
    evaluate_as_trained_and_after(model, compression, [&] {
        double loss_sum = 0;
        std::int64_t correct = 0;
        for (std::int64_t w = 0; w < windows; w += M) {
            const std::int64_t n = batcher.eval_batch(w, std::min(M, windows - w));
            Tensor xb = x.slice0(0, n), yb = y.slice0(0, n);
            be->copy_from_host(batcher.x().data(), xb);
            be->copy_from_host(batcher.y().data(), yb);
            Tensor logits = model.forward(xb, false);
            Tensor lv = logits.reshape({n * T, V});
            const LossResult r = be->cross_entropy_inplace(lv, yb.reshape({n * T}), false, 1.0f);
            loss_sum += r.loss * static_cast<double>(n * T);
            correct += r.correct;
        }
        Pass p;
        p.samples = windows;
        p.tokens = windows * T;
        p.loss = loss_sum / static_cast<double>(p.tokens);
        p.accuracy = static_cast<double>(correct) / static_cast<double>(p.tokens);
        return p;
    }, out);
    return out;
}

}  // namespace

WeightsEvaluation evaluate_weights(const TrainConfig& c, const std::string& weights_path,
                                   const CompressionOptions& compression) {
    validate_model_spec(c.model);
    validate_compression(compression);
    return is_token_model(c.model) ? evaluate_token_weights(c, weights_path, compression)
                                   : evaluate_image_weights(c, weights_path, compression);
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
        log(LogLevel::info, Message(HR_MSG("whatif.prune", "What-if: evaluating the written weights as trained and with "
                                                           "%1 % of each weight tensor's smallest values set to zero"),
                                    {pct}));
    else if (o.prune <= 0)
        log(LogLevel::info, Message(HR_MSG("whatif.quantize", "What-if: evaluating the written weights as trained and "
                                                              "stored as %1 (int8: a scale per output row; int4: a "
                                                              "scale per %2 values)"),
                                    {q, group}));
    else
        log(LogLevel::info, Message(HR_MSG("whatif.both", "What-if: evaluating the written weights as trained and with %1 "
                                                          "% of each weight tensor's smallest values set to zero, then "
                                                          "stored as %2 (int8: a scale per output row; int4: a scale "
                                                          "per %3 values)"),
                                    {pct, q, group}));
    result.what_if = evaluate_weights(c, weights_path, config.what_if);
    const WeightsEvaluation& e = result.what_if;
    const CompressionReport& r = e.compression;
    const std::string stored = format_bytes(r.stored_bytes + r.other_bytes), dense = format_bytes(r.dense_bytes + r.other_bytes);
    if (e.language_model) {
        char loss[4][32];
        std::snprintf(loss[0], sizeof loss[0], "%.4f", e.test_loss);
        std::snprintf(loss[1], sizeof loss[1], "%.4f", e.test_loss_after);
        std::snprintf(loss[2], sizeof loss[2], "%+.4f", e.test_loss_after - e.test_loss);
        std::snprintf(loss[3], sizeof loss[3], "%.2f -> %.2f", std::exp(e.test_loss), std::exp(e.test_loss_after));
        log(LogLevel::info,
            Message(HR_MSG("whatif.result_tokens", "What-if: validation loss %1 per token as trained, %2 after (%3; "
                                                   "perplexity %4) over %5 tokens; the weights take %6 stored so "
                                                   "instead of %7"),
                    {loss[0], loss[1], loss[2], loss[3], std::to_string(e.test_tokens), stored, dense}));
        return;
    }
    char acc[3][32];
    std::snprintf(acc[0], sizeof acc[0], "%.2f %%", 100.0 * e.test_accuracy);
    std::snprintf(acc[1], sizeof acc[1], "%.2f %%", 100.0 * e.test_accuracy_after);
    std::snprintf(acc[2], sizeof acc[2], "%+.2f", 100.0 * (e.test_accuracy_after - e.test_accuracy));
    log(LogLevel::info,
        Message(HR_MSG("whatif.result", "What-if: test accuracy %1 as trained, %2 after (%3 points) on %4 samples; the "
                                        "weights take %5 stored so instead of %6"),
                {acc[0], acc[1], acc[2], std::to_string(e.test_samples), stored, dense}));
}

}  // namespace hr
