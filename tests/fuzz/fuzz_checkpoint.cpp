// Fuzzes the checkpoint/resume reader (core/train/resume.cpp). Input: a checkpoint as one blob,
//   4 bytes   n, little-endian u32: the length of the JSON part (clamped to what is there)
//   n bytes   checkpoint-STEP.json
//   rest      checkpoint-STEP.safetensors (may be empty: then only the JSON is read)
// parse_checkpoint_json must accept a consistent cursor or refuse with an InputError; the tensors,
// put into a tiny run's TrainingState (linear 4->3, SGD with momentum), are accepted only when every
// tensor the run needs is there with its shape and dtype, or refused with an InputError.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <memory>
#include <string>

#include "backend/cpu/cpu_backend.h"
#include "fuzz_support.h"
#include "io/safetensors.h"
#include "strategy/training_state.h"
#include "train/resume.h"

namespace {

struct TinyRun {
    std::unique_ptr<hr::Backend> be = hr::make_cpu_backend(1, std::make_shared<hr::MemoryLedger>());
    hr::ModelSpec spec = hr::model_spec_from_json(nlohmann::json::parse(
        R"({"name":"tiny","input":[4],"num_classes":3,"layers":[{"type":"linear","in_features":4,"out_features":3}]})"));
    hr::OptimizerConfig opt = [] {
        hr::OptimizerConfig o;
        o.momentum = 0.9;
        return o;
    }();
    hr::ResolvedStrategy strategy = hr::resolve_strategy({}, spec, 2);
    hr::TrainingState state{spec, opt, strategy, 1, *be, be->allocator(), *be, be->allocator()};
};

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    static TinyRun run;
    static hrfuzz::MemFile file;
    std::uint32_t n = 0;
    if (size >= 4) std::memcpy(&n, data, 4);
    const std::size_t body = size >= 4 ? size - 4 : 0;
    const std::size_t json_len = std::min<std::size_t>(n, body);
    const std::string json(reinterpret_cast<const char*>(data) + (size >= 4 ? 4 : 0), json_len);
    hrfuzz::expect_ok_or_input_error([&] {
        hr::Checkpoint ck = hr::parse_checkpoint_json(json, "fuzz checkpoint.json");
        const hr::RunCursor& c = ck.cursor;
        if (c.step < 0 || c.step_in_epoch < 0 || c.step_in_epoch > c.step || c.epoch < 1)
            hrfuzz::finding("inconsistent cursor accepted");
        if (c.correct < 0 || c.correct > c.seen) hrfuzz::finding("epoch counts out of range accepted");
        if (!std::isfinite(ck.loss_scale) || ck.loss_scale <= 0) hrfuzz::finding("bad loss scale accepted");
        if (ck.skipped_steps > c.step || ck.optimizer_steps > c.step) hrfuzz::finding("counters past the step accepted");
        if (body > json_len) {
            file.set(data + 4 + json_len, body - json_len);
            ck.tensors = hr::read_safetensors(file.path());
            hr::restore_checkpoint(run.state, ck, "fuzz checkpoint.json");
            // accepted: every tensor the run needs was there with its shape
            for (const auto& e : run.state.resume_tensors()) {
                const hr::SafeTensor* t = ck.tensors.find(e.name);
                if (!t || t->shape != e.shape || t->dtype != e.dtype)
                    hrfuzz::finding("a checkpoint without '" + e.name + "' in the run's shape was accepted");
            }
        }
    });
    return 0;
}
