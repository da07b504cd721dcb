#include "strategy/strategy.h"

#include <algorithm>
#include <sstream>

#include "base/error.h"

namespace hr {

std::string ResolvedStrategy::describe() const {
    std::string s = precision;
    if (!checkpoint_blocks.empty()) s += " + checkpoint " + std::to_string(checkpoint_blocks.size()) + " blocks";
    if (recompute_attention) s += " + attention recompute";
    if (accumulate > 1)
        s += " + micro-batch " + std::to_string(micro_batch) + " x " + std::to_string(accumulate);
    if (offload_optimizer) s += " + optimizer offload";
    return s;
}

std::pair<bool, std::string> split_checkpoint(const std::string& text) {
    if (text == "attention") return {true, "none"};
    if (text.rfind("attention+", 0) == 0) return {true, text.substr(10)};
    return {false, text};
}

std::vector<int> parse_checkpoint(const std::string& full, int n) {
    const std::string text = split_checkpoint(full).second;
    std::vector<int> out;
    auto bad = [&](const std::string& why) {
        return InputError("--checkpoint " + text + ": " + why +
                          "; use none, all, every:K, list:I,J,... (block indices 0.." + std::to_string(n - 1) +
                          ", see headroom plan), auto, or attention (selective recompute, also attention+all)");
    };
    if (text == "none" || text == "auto" || text.empty()) return out;
    if (text == "all") {
        for (int i = 0; i < n; ++i) out.push_back(i);
        return out;
    }
    auto parse_int = [&](const std::string& v) {
        try {
            std::size_t pos = 0;
            int x = std::stoi(v, &pos);
            if (pos == v.size()) return x;
        } catch (...) {
        }
        throw bad("'" + v + "' is not a number");
    };
    if (text.rfind("every:", 0) == 0) {
        int k = parse_int(text.substr(6));
        if (k < 1) throw bad("K must be at least 1");
        for (int i = 0; i < n; i += k) out.push_back(i);
        return out;
    }
    if (text.rfind("list:", 0) == 0) {
        std::stringstream ss(text.substr(5));
        std::string item;
        while (std::getline(ss, item, ',')) {
            int i = parse_int(item);
            if (i < 0 || i >= n) throw bad("block " + item + " does not exist");
            out.push_back(i);
        }
        std::sort(out.begin(), out.end());
        out.erase(std::unique(out.begin(), out.end()), out.end());
        return out;
    }
    throw bad("unknown form");
}

ResolvedStrategy resolve_strategy(const StrategyConfig& s, const ModelSpec& spec, std::int64_t batch) {
    ResolvedStrategy r;
    r.precision = s.precision;
    if (s.precision == "fp32") {
        r.compute_dtype = DType::f32;
    } else if (s.precision == "tf32") {
        r.compute_dtype = DType::f32;
        r.tf32 = true;
    } else if (s.precision == "bf16") {
        r.compute_dtype = DType::bf16;
        r.master_weights = true;
    } else if (s.precision == "fp16") {
        r.compute_dtype = DType::f16;
        r.master_weights = true;
        r.loss_scaling = true;
    } else {
        throw InputError("unknown precision '" + s.precision + "'; use fp32, tf32, bf16 or fp16 (--precision)");
    }
    if (batch < 1) throw InputError("batch size must be at least 1 (--batch)");
    r.batch = batch;
    if (s.accumulate < 1) throw InputError("accumulation steps must be at least 1 (--accumulate)");
    if (s.micro_batch < 0) throw InputError("micro-batch must be positive (--micro-batch)");
    if (s.micro_batch > 0 && s.accumulate > 1) {
        if (s.micro_batch * s.accumulate != batch)
            throw InputError("--micro-batch " + std::to_string(s.micro_batch) + " x --accumulate " +
                             std::to_string(s.accumulate) + " must equal --batch " + std::to_string(batch) +
                             "; give only one of them");
        r.micro_batch = s.micro_batch;
        r.accumulate = s.accumulate;
    } else if (s.micro_batch > 0) {
        if (s.micro_batch > batch)
            throw InputError("--micro-batch " + std::to_string(s.micro_batch) + " is larger than --batch " +
                             std::to_string(batch));
        r.micro_batch = s.micro_batch;
        r.accumulate = (batch + s.micro_batch - 1) / s.micro_batch;
    } else if (s.accumulate > 1) {
        if (batch % s.accumulate != 0)
            throw InputError("--batch " + std::to_string(batch) + " is not divisible by --accumulate " +
                             std::to_string(s.accumulate) + "; pick a divisor or give --micro-batch");
        r.accumulate = s.accumulate;
        r.micro_batch = batch / s.accumulate;
    } else {
        r.micro_batch = batch;
        r.accumulate = 1;
    }
    const int nblocks = static_cast<int>(checkpoint_blocks(spec).size());
    r.checkpoint_blocks = parse_checkpoint(s.checkpoint, nblocks);
    r.recompute_attention = split_checkpoint(s.checkpoint).first;
    r.offload_optimizer = s.offload_optimizer;
    r.loss_scale_init = s.loss_scale_init;
    r.loss_scale_growth_interval = s.loss_scale_growth_interval;
    if (r.loss_scaling && !(s.loss_scale_init >= 1)) throw InputError("the initial loss scale must be at least 1");
    if (r.loss_scaling && s.loss_scale_growth_interval < 1)
        throw InputError("the loss-scale growth interval must be at least 1 step");
    return r;
}

std::string strategy_flags(const StrategyConfig& s) {
    std::string f;
    if (s.precision != "fp32") f += " --precision " + s.precision;
    if (s.checkpoint != "none") f += " --checkpoint " + s.checkpoint;
    if (s.micro_batch > 0) f += " --micro-batch " + std::to_string(s.micro_batch);
    if (s.accumulate > 1 && s.micro_batch == 0) f += " --accumulate " + std::to_string(s.accumulate);
    if (s.offload_optimizer) f += " --offload-optimizer";
    return f.empty() ? f : f.substr(1);
}

}  // namespace hr
