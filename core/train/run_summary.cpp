#include "train/run_summary.h"
#include "base/json_fields.h"
#include "base/json_limits.h"

#include <cmath>

#include "nn/compression.h"
#include "train/record_json.h"

namespace hr {

using json = nlohmann::json;

json run_final_summary(const TrainResult& r) {
    json j = json::object();  // the result's fields marked in_final (train/result.h), then those derived here
    result_fields(r, [&](const char* key, const auto& v, bool in_final) {
        if (in_final) j[key] = json_field::write(v);
    });
    j["epochs"] = r.epochs_completed;
    j["samples_per_second"] = json_finite(r.images_per_second);
    j["tokens_per_second"] = r.seq > 0 ? json_finite(r.tokens_per_second) : json(nullptr);
    j["peak_bytes"] = r.ledger.peak_total;
    j["peak_reserved_bytes"] = r.ledger.peak_reserved;
    j["peak_phase"] = r.ledger.peak_phase;
    j["peak_step"] = r.ledger.peak_step;
    j["compression"] = run_compression_summary(r);
    j["lora"] = run_lora_summary(r);
    // a fine-tuning run's step-0 evaluation (train/before_after.h), null when there was none
    j["before"] = std::isfinite(r.loss_before)
                      ? json{{"step", 0}, {"test_loss", r.loss_before}, {"test_accuracy", json_finite(r.accuracy_before)}}
                      : json(nullptr);
    return j;
}

json run_lora_summary(const TrainResult& r) {
    if (r.lora_rank <= 0) return nullptr;
    return {{"rank", r.lora_rank},
            {"alpha", r.lora_alpha},
            {"dropout", r.lora_dropout},
            {"adapter_params", r.lora_params},
            {"frozen_params", r.frozen_params},
            {"base", quantize_name(r.lora_base_bits)},
            {"quantized_params", r.quantized_params},
            {"test_accuracy_before", json_finite(r.lora_before_accuracy)},
            {"test_loss_before", json_finite(r.lora_before_loss)},
            {"test_accuracy_after", json_finite(r.test_accuracy)},
            {"test_loss_after", json_finite(r.test_loss)}};
}

json compression_counts_json(const CompressionOptions& o, const CompressionReport& c) {
    return {{"prune", o.prune},
            {"quantize", quantize_name(o.bits)},
            {"group", o.bits == 4 || o.bits == kQuantNf4 ? json(o.group) : json(nullptr)},
            {"tensors", c.tensors},
            {"values", c.values},
            {"zeros", c.zeros},
            {"scales", c.scales},
            {"weights_bytes", c.dense_bytes + c.other_bytes},
            {"weights_bytes_after", c.stored_bytes + c.other_bytes}};
}

json run_compression_summary(const TrainResult& r) {
    const WeightsEvaluation& e = r.what_if;
    if (!e.compressed) return nullptr;
    json j = compression_counts_json(e.options, e.compression);
    j["test_samples"] = e.test_samples;
    j["test_tokens"] = e.language_model ? json(e.test_tokens) : json(nullptr);
    j["test_accuracy_before"] = json_finite(e.test_accuracy);
    j["test_loss_before"] = json_finite(e.test_loss);
    j["test_accuracy_after"] = json_finite(e.test_accuracy_after);
    j["test_loss_after"] = json_finite(e.test_loss_after);
    j["max_abs_change"] = json_finite(e.compression.max_abs_change);
    return j;
}

json run_distributed_summary(const TrainResult& r, std::int64_t batch, const std::vector<std::size_t>& predicted) {
    // (a result that did not fill them is one process's: its batch and its peak)
    const std::vector<std::int64_t> rank_batch = r.rank_batches.empty() ? std::vector<std::int64_t>{batch} : r.rank_batches;
    const std::vector<std::size_t> measured = r.rank_peak_bytes.empty() ? std::vector<std::size_t>{r.ledger.peak_total}
                                                                        : r.rank_peak_bytes;
    return {{"world_size", r.world_size},
            {"stage", r.shard},
            {"tp_head", r.tp_head},
            {"pipeline_layers", r.stage_layers},
            {"rank_batch", rank_batch},
            {"measured_peak_bytes", measured},
            {"measured_resident_peak_bytes", r.rank_resident_peak_bytes},
            {"communication_overhead_bytes", r.rank_communication_overhead_bytes.empty()
                                                 ? std::vector<std::int64_t>(rank_batch.size(), 0)
                                                 : r.rank_communication_overhead_bytes},
            {"predicted_peak_bytes", predicted.empty() ? json(nullptr) : json(predicted)},
            {"communication_bytes_per_step", json_finite(r.communication_bytes_per_step)},
            {"communication_seconds_per_step", json_finite(r.communication_seconds_per_step)}};
}

}  // namespace hr
