#pragma once
// How the CUDA backend ranks cuDNN's convolution algorithms (cuda_conv.cpp), in plain C++ so the
// rules are tested on the CPU (tests/unit/test_cuda_logic.cpp). Header only, no cuDNN types.
//
// From cuDNN's heuristic results (best first) a direction keeps, in this order:
//   1. the algorithm a larger batch of the same geometry runs (`preferred`), when it is allowed here
//      (the last, smaller batch of an epoch keeps the full batch's choice: defect 1 of issue 11);
//   2. with `deterministic`, the deterministic algorithms in cuDNN's order;
//   3. the others in cuDNN's order.
// Allowed: cuDNN supports it for the shapes, its workspace is within the limit, and its math type is
// allowed (strict f32: FMA math only, defect 5). Each (algorithm, math) appears once. At run time the
// first one that fits the workspace given is used, and an execution failure moves on to the next
// (defect 4).
#include <cstddef>
#include <optional>
#include <vector>

namespace hr::cuda {

enum class ConvMath { fma, default_math, tensor_op };

struct HeuristicResult {
    int algo = 0;
    bool supported = true;          // cuDNN's status for it was success (and its workspace could be queried)
    ConvMath reported_math = ConvMath::default_math;  // the math it would run with
    int math_code = 0;              // cudnnMathType_t to set on the descriptor when running it
    bool deterministic = true;
    std::size_t workspace = 0;      // bytes for these shapes with that math
};

struct ConvCandidate {
    int algo = 0;
    int math_code = 0;
    std::size_t workspace = 0;
    bool deterministic = true;
    bool operator==(const ConvCandidate& o) const { return algo == o.algo && math_code == o.math_code; }
};

struct ChoiceRules {
    std::size_t limit = std::size_t(256) << 20;
    bool fma_only = false;       // strict f32: no tensor-core (TF32) math, not even CUDNN_DEFAULT_MATH
    bool deterministic = true;   // deterministic algorithms first
};

inline bool allowed(const HeuristicResult& r, const ChoiceRules& rules) {
    if (!r.supported || r.workspace > rules.limit) return false;
    if (rules.fma_only && r.reported_math != ConvMath::fma) return false;
    return true;
}

inline std::vector<ConvCandidate> rank_candidates(const std::vector<HeuristicResult>& found, const ChoiceRules& rules,
                                                  const std::optional<ConvCandidate>& preferred = std::nullopt) {
    std::vector<ConvCandidate> out;
    auto add = [&](const HeuristicResult& r) {
        const ConvCandidate c{r.algo, r.math_code, r.workspace, r.deterministic};
        for (const auto& o : out)
            if (o == c) return;
        out.push_back(c);
    };
    if (preferred)
        for (const auto& r : found)
            if (allowed(r, rules) && r.algo == preferred->algo && r.math_code == preferred->math_code) {
                add(r);
                break;
            }
    for (int pass = rules.deterministic ? 0 : 1; pass < 2; ++pass)
        for (const auto& r : found) {
            if (!allowed(r, rules)) continue;
            if (pass == 0 && !r.deterministic) continue;
            add(r);
        }
    return out;
}

// cuDNN 9 status codes after which the next algorithm is tried: not supported (3xxx), internal
// errors (4xxx) and execution failures (5xxx). A bad parameter (2xxx) is ours: it is reported.
inline bool is_execution_failure(int cudnn_status) { return cudnn_status >= 3000 && cudnn_status < 6000; }

}  // namespace hr::cuda
