// Fuzzes the model spec (core/nn/model_spec.cpp): the guarded JSON parse, the reader, the writer
// (round trip), shape inference, checkpoint blocks and, for valid specs, the planner's prediction
// (plan/planner.cpp) at a small batch -- a dry run on counting allocators, so no input can make it
// allocate or take long. Input: the spec file's text.
#include <cstdint>
#include <string_view>

#include "base/json_limits.h"
#include "fuzz_support.h"
#include "nn/model_spec.h"
#include "plan/planner.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    const std::string_view text(reinterpret_cast<const char*>(data), size);
    hrfuzz::expect_ok_or_input_error([&] {
        const nlohmann::json j = hr::parse_json_limited(text, "fuzz spec");
        const hr::ModelSpec spec = hr::model_spec_from_json(j);
        if (!(hr::model_spec_from_json(hr::model_spec_to_json(spec)) == spec)) hrfuzz::finding("JSON round trip differs");
        const hr::SpecReport rep = hr::analyze_model_spec(spec);
        if (rep.total_params < 0 || rep.activation_bytes_per_sample < 0) hrfuzz::finding("negative totals");
        if (!rep.ok && rep.error.empty()) hrfuzz::finding("invalid without a message");
        if (!rep.ok && rep.error != rep.error_message.english()) hrfuzz::finding("error and error_message differ");
        (void)hr::checkpoint_blocks(spec);
        if (!rep.ok) return;
        hr::PlanRequest req;
        req.spec = spec;
        req.batch = 2;
        req.threads = 1;
        req.device = "cpu";
        const hr::MemoryPlan plan = hr::predict_memory(req);
        if (plan.device_total < static_cast<std::size_t>(rep.total_params) * 4) hrfuzz::finding("plan below the weights");
    });
    return 0;
}
