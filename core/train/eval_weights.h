#pragma once
// `headroom eval`: the test accuracy and loss of a weights file on a dataset's test split, with the same
// data pipeline (normalisation, order) as training's evaluation. A language model: its loss per token and
// the share of next tokens it predicts (argmax) over the consecutive validation windows a run evaluates
// (--seq, --eval-tokens, --test-limit as a run reads them), with the tokenizer the file names (next to it),
// else --tokenizer built from the corpus as a run builds it. The file is matched to the model as
// train/resume.h load_weights_into says (names, DDP's "module." prefix, or by order).
#include <string>
#include <vector>

#include "base/log.h"
#include "nn/compression.h"
#include "train/config.h"

namespace hr {

struct TrainResult;
struct RunLog;

struct WeightsEvaluation {
    double test_accuracy = 0;          // a language model: the share of next tokens predicted
    double test_loss = 0;              // a language model: per token
    std::int64_t test_samples = 0;     // a language model: validation windows
    bool language_model = false;
    std::int64_t test_tokens = 0;      // a language model: tokens scored (windows x sequence)
    std::string tokenizer;             // a language model: the tokenizer's kind ("byte", "char", "bpe:N")
    std::string device_name;
    std::vector<Message> notes;  // how the file's tensors were matched (describe_weights_match), the tokenizer built
    // With a compression what-if (nn/compression.h): the same test split after pruning/quantising the
    // weights, and what the weights take stored that way.
    bool compressed = false;
    CompressionOptions options;  // the what-if evaluated
    double test_accuracy_after = 0;
    double test_loss_after = 0;
    CompressionReport compression;
};

// config: model, data, test_limit, batch (the evaluation's micro-batch), device, threads.
// InputError for a file, model or dataset that does not fit.
// compression: evaluated as they are, then again after the what-if (when compression.active()).
WeightsEvaluation evaluate_weights(const TrainConfig& config, const std::string& weights_path,
                                   const CompressionOptions& compression = {});

// The end of a run with --prune/--quantize (TrainConfig::what_if): its written weights evaluated as above
// into result.what_if, on the run's device (the CPU for a run on several ranks), with two lines in the
// run's log. Nothing when no what-if was asked for. InputError/Error as evaluate_weights.
void evaluate_what_if(const TrainConfig& config, const std::string& weights_path, TrainResult& result,
                      const RunLog& log);

}  // namespace hr
