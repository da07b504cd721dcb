#pragma once
// Value types the trainer reports through its callbacks; the app turns them into queued Qt signals.
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "base/log.h"
#include "base/message.h"
#include "memory/ledger.h"

namespace hr {

struct StepEvent {
    std::int64_t step = 0;          // 1-based global step
    std::int64_t total_steps = 0;
    int epoch = 0;                  // 1-based
    std::int64_t step_in_epoch = 0;
    std::int64_t steps_per_epoch = 0;
    double loss = 0;                // training loss of this step's batch
    double accuracy = 0;            // training accuracy of this step's batch
    double lr = 0;
    double step_seconds = 0;
    double images_per_second = 0;   // smoothed over recent steps
    double elapsed_seconds = 0;
    double eta_seconds = 0;
    double loss_scale = 0;          // fp16 only, else 0
    bool skipped = false;           // fp16: step skipped for inf/NaN gradients
    double tokens_per_second = 0;   // language models: smoothed like images_per_second (a sample is a sequence)
    double grad_norm = 0;           // the gradients' global L2 norm when clipping is on (--grad-clip), else 0
};

// An evaluation on the held-out split (every eval_every steps, at the end of an epoch as
// evaluate_each_epoch says, and at the end): the test set of an image run, a language model's validation
// split.
struct EvalEvent {
    std::int64_t step = 0;
    int epoch = 0;
    double loss = 0;                // mean loss per sample (language models: cross-entropy per token, nats)
    double accuracy = 0;            // accuracy per sample (language models: next-token accuracy)
    std::int64_t tokens = 0;        // language models: validation tokens evaluated (else 0)
    double seconds = 0;             // time the evaluation took
    std::int64_t samples = 0;       // samples evaluated (language models: sequences)
};

struct WeightsSnapshot;  // train/generate.h: the weights (and tokenizer) at a step, for sampling

struct EpochEvent {
    int epoch = 0;
    double train_loss = 0;          // mean over the epoch
    double train_accuracy = 0;
    double test_loss = 0;           // NaN when not evaluated
    double test_accuracy = 0;
    double seconds = 0;
    double images_per_second = 0;
    std::int64_t step = 0;          // global step at the end of the epoch
    double tokens_per_second = 0;   // language models
};

struct MemoryEvent {
    std::int64_t step = 0;
    double elapsed_seconds = 0;
    LedgerSnapshot ledger;
    std::size_t device_capacity = 0;  // bytes of the device (RAM for the CPU)
    int rank = 0;                     // the rank whose ledger this is (several ranks; a relay sets it), else 0
};

struct LogEvent {
    LogLevel level = LogLevel::info;
    std::string message;  // in English
    Message text;         // the same sentence, translatable (text.english() == message); no id: plain text
};

// The run's log, for a person: a translatable sentence (or plain text) to the callbacks' on_log.
struct RunLog {
    std::function<void(const LogEvent&)> sink;
    void operator()(LogLevel level, const Message& m) const {
        if (sink) sink({level, m.english(), m});
    }
    void operator()(LogLevel level, const std::string& plain) const { (*this)(level, Message::plain(plain)); }
};

// The device a run trains on, sent once, as soon as the backend exists (before the data loads).
struct DeviceEvent {
    std::string device;  // "cpu", "cuda:0"
    std::string name;    // the backend's name: "cpu (OpenBLAS 0.3.21, 2 threads)"
    std::string note;    // why, when the choice was made for the user ("device auto: ..."), else ""
    Message text;        // the same note, translatable (text.english() == note)
};

struct TrainCallbacks {
    std::function<void(const DeviceEvent&)> on_device;
    std::function<void(const StepEvent&)> on_step;
    std::function<void(const EpochEvent&)> on_epoch;
    std::function<void(const MemoryEvent&)> on_memory;
    std::function<void(const LogEvent&)> on_log;
    std::function<void(const EvalEvent&)> on_eval;
    // After Trainer::request_snapshot(): a copy of the weights taken between two steps (any model).
    std::function<void(std::shared_ptr<const WeightsSnapshot>)> on_snapshot;
};

}  // namespace hr
