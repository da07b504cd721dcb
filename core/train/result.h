#pragma once
// What a run ends with (Trainer::run): its status, final figures, the ledger's peaks and, for several ranks,
// how the run was spread. One type for both workloads (train/workload.h). Its one JSON form is
// train/record_json.h's to_json/from_json over result_fields() below (the rank wire format, the history);
// run.json's "final" (train/run_summary.h) takes the fields marked `in_final` from the same list.
#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include "base/message.h"
#include "memory/ledger.h"
#include "memory/step_timeline.h"
#include "train/eval_weights.h"
#include "train/events.h"

namespace hr {

struct TrainResult {
    std::string status = "finished";  // finished | stopped | failed
    std::string error;                // failed: the message
    std::vector<Message> error_messages;  // failed: the same as translatable sentences (empty: only error)
    bool bad_input = false;           // failed because of the run's settings (e.g. the loss diverged)
    double test_accuracy = 0;
    double test_loss = 0;
    double train_loss = 0;            // last epoch's mean (or of the steps run)
    double train_accuracy = 0;
    std::int64_t steps = 0;
    int epochs_completed = 0;
    double seconds = 0;
    double train_seconds = 0;         // of `seconds`, the summed step time (images_per_second's denominator)
    double images_per_second = 0;     // training throughput over the whole run
    std::vector<EpochEvent> epochs;
    LedgerSnapshot ledger;            // peaks of the run
    double tokens_per_second = 0;     // language models: training throughput over the whole run
    std::vector<EvalEvent> evals;     // language models: every validation loss, the last at the end
    std::string tokenizer;            // language models: "byte", "char", "bpe:4000"
    std::int64_t vocab_size = 0;      // the tokenizer's
    std::int64_t seq = 0;             // tokens per sequence
    std::string chat_template;        // instruction data (jsonl:): the template used ("llama3", ...), else ""
    std::string sequences;            // instruction data: "pad" or "pack"
    std::int64_t trained_tokens = 0;  // instruction data: training tokens the loss is taken on
    std::int64_t truncated_rows = 0;  // instruction data, pad: rows cut at the sequence length
    std::string device_name;          // "cpu (OpenBLAS ..., 2 threads)"
    std::int64_t param_count = 0;
    std::int64_t train_samples = 0;   // language models: training tokens
    std::int64_t test_samples = 0;    // language models: validation tokens
    std::string data_source;          // folder the dataset came from ("" for synthetic)
    std::string strategy;             // ResolvedStrategy::describe()
    std::int64_t skipped_steps = 0;   // fp16: steps skipped for inf/NaN gradients
    double final_loss_scale = 0;      // fp16: the loss scale at the end (else 0)
    StepTimeline step_timeline;       // the chosen step's memory timeline (TrainConfig::timeline_step; empty: none)
    LedgerSnapshot host_ledger;       // host memory of offloaded optimizer state (empty otherwise)
    bool out_of_memory = false;       // failed because the device (or --memory-limit) ran out
    std::string oom_category;         // the largest category when it happened
    std::size_t oom_limit = 0;
    std::int64_t resumed_from_step = -1;  // --resume: the checkpoint's step (-1: a fresh run)
    std::string checkpoint;           // the last checkpoint written (train/resume.h), "" : none
    std::vector<std::string> weights_notes;  // --init-from: how the file's tensors were matched
    // several ranks (docs/distributed.md); one process: world_size 1, shard "none"
    int world_size = 1;
    int rank = 0;                                // the rank this result comes from (metrics are all ranks')
    std::string shard = "none";                  // the sharding stage
    int tp_head = 1;                             // ranks the last layer's columns are split over (1: whole)
    std::vector<int> stage_layers;               // pipeline stages: top-level layers of each (empty: none)
    std::vector<std::int64_t> rank_batches;      // samples of each rank per step
    std::vector<std::size_t> rank_peak_bytes;    // measured device peak of each rank (the ledger's)
    // each rank's process at its peak as the OS counts it (VmHWM at the run's end, -1 unknown): the
    // ledger's host side, the runtime, the data and the libraries (docs/design.md decision 9)
    std::vector<std::int64_t> rank_resident_peak_bytes;
    // each rank's engine memory on its device outside the ledger (NCCL's buffers; 0 for MPI and one
    // process): Communicator::device_overhead_bytes
    std::vector<std::int64_t> rank_communication_overhead_bytes;
    double communication_bytes_per_step = 0;     // payload this rank handed its communicator per optimizer step
    double communication_seconds_per_step = 0;   // host time this rank waited for communication per step
    // parameter offload: bytes copied between host and device per training step, both ways (evaluations'
    // gathers included, as in communication_bytes_per_step; checkpoints' not); 0 otherwise
    double offload_bytes_per_step = 0;
    // LoRA (--lora): the test figures of the frozen model before training (NaN without LoRA or when resumed),
    // the adapters' values (what trained) and the frozen ones'
    double lora_before_loss = NAN, lora_before_accuracy = NAN;
    // A fine-tuning run (LoRA, or full training from --init-from; not resumed): the test figures at step 0, before
    // the first update (train/before_after.h); NaN otherwise
    double loss_before = NAN, accuracy_before = NAN;
    std::int64_t lora_params = 0, frozen_params = 0;
    int lora_rank = 0;
    double lora_alpha = 0;
    double lora_dropout = 0;  // --lora-dropout: the probability each adapter's input is dropped while training
    // QLoRA (--quantize-base): the bits of the quantised base (0: not quantised) and its values stored so
    int lora_base_bits = 0;
    std::int64_t quantized_params = 0;
    // --prune/--quantize (TrainConfig::what_if): the written weights evaluated on the test split as trained
    // and pruned/quantised (train/eval_weights.h), by whoever wrote them (app/session); compressed is false
    // when no what-if was asked for or the run wrote no weights
    WeightsEvaluation what_if;
};

// Every field of a TrainResult by its JSON name, once: f(name, member, in_final) for each. A new field is
// its member above and one line here; `in_final` puts it into run.json's "final" and the history's
// final_metrics as well (docs/run-json.md). what_if is written by run_summary.h's "compression" alone.
template <typename Result, typename F>
void result_fields(Result& r, F&& f) {
    constexpr bool in_final = true, wire = false;
    f("status", r.status, wire);
    f("error", r.error, wire);
    f("error_messages", r.error_messages, wire);
    f("bad_input", r.bad_input, wire);
    f("test_accuracy", r.test_accuracy, in_final);
    f("test_loss", r.test_loss, in_final);
    f("train_loss", r.train_loss, in_final);
    f("train_accuracy", r.train_accuracy, in_final);
    f("steps", r.steps, in_final);
    f("epochs_completed", r.epochs_completed, in_final);
    f("seconds", r.seconds, in_final);
    f("train_seconds", r.train_seconds, in_final);
    f("images_per_second", r.images_per_second, in_final);
    f("epochs", r.epochs, wire);
    f("ledger", r.ledger, wire);
    f("tokens_per_second", r.tokens_per_second, wire);
    f("evals", r.evals, wire);
    f("tokenizer", r.tokenizer, wire);
    f("vocab_size", r.vocab_size, wire);
    f("seq", r.seq, wire);
    f("chat_template", r.chat_template, wire);
    f("sequences", r.sequences, wire);
    f("trained_tokens", r.trained_tokens, wire);
    f("truncated_rows", r.truncated_rows, wire);
    f("device_name", r.device_name, wire);
    f("param_count", r.param_count, in_final);
    f("train_samples", r.train_samples, wire);
    f("test_samples", r.test_samples, wire);
    f("data_source", r.data_source, wire);
    f("strategy", r.strategy, wire);
    f("skipped_steps", r.skipped_steps, in_final);
    f("final_loss_scale", r.final_loss_scale, in_final);
    f("host_ledger", r.host_ledger, wire);
    f("out_of_memory", r.out_of_memory, wire);
    f("oom_category", r.oom_category, wire);
    f("oom_limit", r.oom_limit, wire);
    f("resumed_from_step", r.resumed_from_step, wire);
    f("checkpoint", r.checkpoint, wire);
    f("weights_notes", r.weights_notes, wire);
    f("world_size", r.world_size, wire);
    f("rank", r.rank, wire);
    f("shard", r.shard, wire);
    f("tp_head", r.tp_head, wire);
    f("stage_layers", r.stage_layers, wire);
    f("rank_batches", r.rank_batches, wire);
    f("rank_peak_bytes", r.rank_peak_bytes, wire);
    f("rank_resident_peak_bytes", r.rank_resident_peak_bytes, wire);
    f("rank_communication_overhead_bytes", r.rank_communication_overhead_bytes, wire);
    f("communication_bytes_per_step", r.communication_bytes_per_step, wire);
    f("communication_seconds_per_step", r.communication_seconds_per_step, wire);
    f("offload_bytes_per_step", r.offload_bytes_per_step, wire);
    f("lora_before_loss", r.lora_before_loss, wire);
    f("lora_before_accuracy", r.lora_before_accuracy, wire);
    f("loss_before", r.loss_before, wire);
    f("accuracy_before", r.accuracy_before, wire);
    f("lora_params", r.lora_params, wire);
    f("frozen_params", r.frozen_params, wire);
    f("lora_rank", r.lora_rank, wire);
    f("lora_alpha", r.lora_alpha, wire);
    f("lora_dropout", r.lora_dropout, wire);
    f("lora_base_bits", r.lora_base_bits, wire);
    f("quantized_params", r.quantized_params, wire);
    f("step_timeline", r.step_timeline, wire);  // memory/step_timeline.h; run.json gets its summary
}

}  // namespace hr
