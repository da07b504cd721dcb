#pragma once
// The figures a finished run is summed up by, written by one function each for both records of a run:
// run.json's "final" and "distributed" (train/run_record.cpp) and the history's final_metrics
// (app/store/run_store.cpp, RunStore::finalMetrics, with "distributed" inside it for several ranks).
// Field names say what they carry for every workload: samples_per_second (images, or sequences for a
// language model) beside the older images_per_second (the same number, kept for readers of older records),
// tokens_per_second (language models; null otherwise). Non-finite numbers are null (JSON has no NaN).
#include <cstdint>
#include <vector>

#include <nlohmann/json.hpp>

#include "train/trainer.h"

namespace hr {

// The result's fields marked in_final in result_fields (train/result.h: test/train loss and accuracy,
// steps, epochs_completed, seconds, images_per_second, the parameter count, fp16's skipped steps and final
// loss scale, ...), then those derived here: epochs, samples_per_second, tokens_per_second, the ledger's
// peak (bytes, reserved bytes, phase, step), "compression" and "lora" (below).
nlohmann::json run_final_summary(const TrainResult& r);
// --prune/--quantize: the what-if on the written weights (prune, quantize, group, test accuracy and loss
// before and after, the weights' bytes as f32 and stored so); null without one.
// LoRA (--lora): rank, alpha, the adapters' and the frozen values, the test figures before and after; null without
nlohmann::json run_lora_summary(const TrainResult& r);
nlohmann::json run_compression_summary(const TrainResult& r);
// The options and the counts of a compression (prune, quantize, group: null unless int4, tensors, values,
// zeros, scales, weights_bytes and weights_bytes_after with the other tensors): run.json and headroom plan.
nlohmann::json compression_counts_json(const CompressionOptions& options, const CompressionReport& report);
// world_size, stage, rank_batch (`batch` for one process), measured and resident peaks per rank,
// predicted_peak_bytes (null when `predicted` is empty), communication per step.
nlohmann::json run_distributed_summary(const TrainResult& r, std::int64_t batch, const std::vector<std::size_t>& predicted);

}  // namespace hr
