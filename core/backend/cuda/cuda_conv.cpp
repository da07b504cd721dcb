// CudaBackend convolution through cuDNN 9's legacy convolution API (cudnnConvolutionForward,
// ...BackwardData, ...BackwardFilter: deprecated in cuDNN 9 but present; the graph API would be
// the replacement).
//
// Per shape (x, w, parameters, dtype, tf32) a plan holds the descriptors and, per direction, a ranked
// list of algorithms from cuDNN's heuristics (cudnnGet*Algorithm_v7: no trial runs, no allocations
// outside the ledger), filtered and ordered by conv_choice.h's rules: only those that succeed, fit the
// workspace limit and use an allowed math type; deterministic ones first when asked for; and, for a
// batch smaller than one planned before with the same geometry, the larger batch's choice first.
// conv2d_workspace_bytes returns the largest workspace of the three first choices; the caller
// allocates it (category workspace) and passes it to each call. A call runs the first candidate that
// fits the workspace it is given (so a last, smaller batch never needs more than was planned for the
// full one) and, when cuDNN fails to execute it, the next one (defect 4 of issue 11).
//
// Math: f32 without tf32 uses CUDNN_FMA_MATH only (no TF32 tensor cores, ~1e-6 relative error; on
// sm_80+ CUDNN_DEFAULT_MATH would allow TF32); with tf32, and for bf16/f16 data (f32 accumulation),
// tensor-core math is allowed.
#if defined(__GNUC__)
#pragma GCC diagnostic ignored "-Wdeprecated-declarations"
#endif
#include <algorithm>
#include <climits>
#include <optional>
#include <vector>

#include "backend/op_checks.h"
#include "backend/cuda/conv_choice.h"
#include "backend/cuda/cuda_backend_impl.h"

namespace hr {

using ops::desc;
using ops::fail;
using ops::ConvGeom;
using ops::params_str;
using ops::require_same_dtype;

namespace cuda {

struct TensorDesc {
    cudnnTensorDescriptor_t d = nullptr;
    TensorDesc() { HR_CUDNN_CHECK(cudnnCreateTensorDescriptor(&d)); }
    ~TensorDesc() { (void)cudnnDestroyTensorDescriptor(d); }
    TensorDesc(const TensorDesc&) = delete;
    TensorDesc& operator=(const TensorDesc&) = delete;
};
struct FilterDesc {
    cudnnFilterDescriptor_t d = nullptr;
    FilterDesc() { HR_CUDNN_CHECK(cudnnCreateFilterDescriptor(&d)); }
    ~FilterDesc() { (void)cudnnDestroyFilterDescriptor(d); }
    FilterDesc(const FilterDesc&) = delete;
    FilterDesc& operator=(const FilterDesc&) = delete;
};
struct ConvDesc {
    cudnnConvolutionDescriptor_t d = nullptr;
    ConvDesc() { HR_CUDNN_CHECK(cudnnCreateConvolutionDescriptor(&d)); }
    ~ConvDesc() { (void)cudnnDestroyConvolutionDescriptor(d); }
    ConvDesc(const ConvDesc&) = delete;
    ConvDesc& operator=(const ConvDesc&) = delete;
};

struct Direction {
    std::vector<ConvCandidate> ranked;  // conv_choice.h order; ranked[0] is what workspace_bytes plans for
    std::size_t planned_ws() const { return ranked.empty() ? 0 : ranked.front().workspace; }
};

struct ConvPlan {
    TensorDesc x, y;
    FilterDesc w;
    ConvDesc fwd, bwd_data, bwd_filter;  // one each: each direction sets its candidate's math type
    Direction dir[3];                    // forward, backward data, backward filter
    std::size_t max_ws() const { return std::max({dir[0].planned_ws(), dir[1].planned_ws(), dir[2].planned_ws()}); }
};

void ConvPlanDeleter::operator()(ConvPlan* p) const { delete p; }

namespace {

// The shared checks (cpu_common.h), plus the GPU's 32-bit dimension limit.
ConvGeom gpu_conv_geom(const char* op, const Shape& x, const Shape& w, const Shape& y, const Conv2dParams& p) {
    ConvGeom g = ops::conv_geom(op, x, w, y, p);
    for (std::int64_t v : {g.N, g.C, g.H, g.W, g.K, g.kh, g.kw})
        if (v <= 0 || v > INT_MAX)
            fail(op, "x " + shape_str(x) + " and w " + shape_str(w) + ": every dimension must be in [1, 2^31) on the GPU");
    return g;
}

cudnnDataType_t dnn_type(const char* op, DType dt) {
    switch (dt) {
        case DType::f32: return CUDNN_DATA_FLOAT;
        case DType::bf16: return CUDNN_DATA_BFLOAT16;
        case DType::f16: return CUDNN_DATA_HALF;
        case DType::f64: fail(op, "f64 is not supported on the GPU; use f32 (or bf16/f16)");
        default: fail(op, std::string("expects a float dtype, got ") + dtype_name(dt));
    }
}

ConvMath math_of(cudnnMathType_t m) {
    switch (m) {
        case CUDNN_FMA_MATH: return ConvMath::fma;
        case CUDNN_DEFAULT_MATH: return ConvMath::default_math;
        default: return ConvMath::tensor_op;
    }
}

const char* direction_name(int d) { return d == 0 ? "forward" : d == 1 ? "backward-data" : "backward-filter"; }

// Workspace of algorithm `algo` in direction d with the descriptor's math type set to `math`; false
// when cuDNN does not support it for these shapes.
bool workspace_of(cudnnHandle_t h, ConvPlan& p, int d, int algo, cudnnMathType_t math, std::size_t& ws) {
    cudnnStatus_t st;
    switch (d) {
        case 0:
            if (cudnnSetConvolutionMathType(p.fwd.d, math) != CUDNN_STATUS_SUCCESS) return false;
            st = cudnnGetConvolutionForwardWorkspaceSize(h, p.x.d, p.w.d, p.fwd.d, p.y.d,
                                                         static_cast<cudnnConvolutionFwdAlgo_t>(algo), &ws);
            break;
        case 1:
            if (cudnnSetConvolutionMathType(p.bwd_data.d, math) != CUDNN_STATUS_SUCCESS) return false;
            st = cudnnGetConvolutionBackwardDataWorkspaceSize(h, p.w.d, p.y.d, p.bwd_data.d, p.x.d,
                                                              static_cast<cudnnConvolutionBwdDataAlgo_t>(algo), &ws);
            break;
        default:
            if (cudnnSetConvolutionMathType(p.bwd_filter.d, math) != CUDNN_STATUS_SUCCESS) return false;
            st = cudnnGetConvolutionBackwardFilterWorkspaceSize(h, p.x.d, p.y.d, p.bwd_filter.d, p.w.d,
                                                                static_cast<cudnnConvolutionBwdFilterAlgo_t>(algo), &ws);
            break;
    }
    return st == CUDNN_STATUS_SUCCESS;
}

// cuDNN's heuristic results for direction d, as candidates (status, reported math, determinism,
// workspace with the math we would run it with).
template <class Perf>
std::vector<HeuristicResult> heuristics_of(cudnnHandle_t h, ConvPlan& p, int d, const std::vector<Perf>& perf, int got,
                                           bool fma) {
    std::vector<HeuristicResult> out;
    for (int i = 0; i < got; ++i) {
        const Perf& r = perf[static_cast<std::size_t>(i)];
        HeuristicResult c;
        c.algo = static_cast<int>(r.algo);
        c.supported = r.status == CUDNN_STATUS_SUCCESS;
        // what we run it with: FMA only for strict f32 (defect 5), else what cuDNN reported
        const cudnnMathType_t run_math = fma ? CUDNN_FMA_MATH : r.mathType;
        c.reported_math = math_of(run_math);
        c.deterministic = r.determinism == CUDNN_DETERMINISTIC;
        c.math_code = static_cast<int>(run_math);
        c.workspace = r.memory;
        if (c.supported && !workspace_of(h, p, d, c.algo, run_math, c.workspace)) c.supported = false;
        out.push_back(c);
    }
    return out;
}

}  // namespace
}  // namespace cuda

cuda::ConvPlan& CudaBackend::conv_plan(const Shape& xs, const Shape& ws, const Shape& ys, const Conv2dParams& p,
                                       DType dt) const {
    using namespace cuda;
    const char* op = "conv2d";
    const ConvGeom g = gpu_conv_geom(op, xs, ws, ys, p);
    const cudnnDataType_t type = dnn_type(op, dt);
    const bool tf32 = options_.tf32;
    std::array<std::int64_t, 18> key{g.N,        g.C,        g.H,          g.W,          g.K,
                                     g.kh,       g.kw,       p.stride_h,   p.stride_w,   p.pad_h,
                                     p.pad_w,    p.dilation_h, p.dilation_w, static_cast<std::int64_t>(dt),
                                     tf32 ? 1 : 0, static_cast<std::int64_t>(options_.conv_workspace_limit),
                                     options_.deterministic ? 1 : 0, 0};
    auto it = conv_plans_.find(key);
    if (it != conv_plans_.end()) return *it->second;

    // The plan of the largest batch planned so far with the same geometry (defect 1: the last,
    // smaller batch of an epoch reuses the full batch's algorithms when they fit).
    const ConvPlan* larger = nullptr;
    std::int64_t larger_n = 0;
    for (const auto& [k, plan] : conv_plans_) {
        auto k2 = k;
        k2[0] = key[0];
        if (k2 == key && k[0] > g.N && k[0] > larger_n) {
            larger = plan.get();
            larger_n = k[0];
        }
    }

    std::unique_ptr<ConvPlan, ConvPlanDeleter> plan(new ConvPlan);
    HR_CUDNN_CHECK(cudnnSetTensor4dDescriptor(plan->x.d, CUDNN_TENSOR_NCHW, type, int(g.N), int(g.C), int(g.H), int(g.W)));
    HR_CUDNN_CHECK(cudnnSetTensor4dDescriptor(plan->y.d, CUDNN_TENSOR_NCHW, type, int(g.N), int(g.K), int(g.Ho), int(g.Wo)));
    HR_CUDNN_CHECK(cudnnSetFilter4dDescriptor(plan->w.d, type, CUDNN_TENSOR_NCHW, int(g.K), int(g.C), int(g.kh), int(g.kw)));
    const bool fma = dt == DType::f32 && !tf32;
    const cudnnMathType_t math = fma ? CUDNN_FMA_MATH : CUDNN_TENSOR_OP_MATH;
    for (ConvDesc* c : {&plan->fwd, &plan->bwd_data, &plan->bwd_filter}) {
        HR_CUDNN_CHECK(cudnnSetConvolution2dDescriptor(c->d, p.pad_h, p.pad_w, p.stride_h, p.stride_w, p.dilation_h,
                                                       p.dilation_w, CUDNN_CROSS_CORRELATION, CUDNN_DATA_FLOAT));
        HR_CUDNN_CHECK(cudnnSetConvolutionMathType(c->d, math));
    }
    // cuDNN's own output size must agree with ours (checked above against y).
    int on = 0, oc = 0, oh = 0, ow = 0;
    HR_CUDNN_CHECK(cudnnGetConvolution2dForwardOutputDim(plan->fwd.d, plan->x.d, plan->w.d, &on, &oc, &oh, &ow));
    if (on != g.N || oc != g.K || oh != g.Ho || ow != g.Wo)
        throw Error("internal: cuDNN computes output " + shape_str({on, oc, oh, ow}) + " for x " + shape_str(xs) +
                    ", w " + shape_str(ws) + ", " + params_str(p) + "; expected " + shape_str(ys));
    cudnnHandle_t h = cudnn_;
    ChoiceRules rules;
    rules.limit = options_.conv_workspace_limit;
    rules.fma_only = fma;
    rules.deterministic = options_.deterministic;
    for (int d = 0; d < 3; ++d) {
        std::vector<HeuristicResult> found;
        int max = 0, got = 0;
        if (d == 0) {
            HR_CUDNN_CHECK(cudnnGetConvolutionForwardAlgorithmMaxCount(h, &max));
            std::vector<cudnnConvolutionFwdAlgoPerf_t> perf(static_cast<std::size_t>(std::max(max, 1)));
            HR_CUDNN_CHECK(cudnnGetConvolutionForwardAlgorithm_v7(h, plan->x.d, plan->w.d, plan->fwd.d, plan->y.d,
                                                                  max, &got, perf.data()));
            found = heuristics_of(h, *plan, d, perf, got, fma);
        } else if (d == 1) {
            HR_CUDNN_CHECK(cudnnGetConvolutionBackwardDataAlgorithmMaxCount(h, &max));
            std::vector<cudnnConvolutionBwdDataAlgoPerf_t> perf(static_cast<std::size_t>(std::max(max, 1)));
            HR_CUDNN_CHECK(cudnnGetConvolutionBackwardDataAlgorithm_v7(h, plan->w.d, plan->y.d, plan->bwd_data.d,
                                                                       plan->x.d, max, &got, perf.data()));
            found = heuristics_of(h, *plan, d, perf, got, fma);
        } else {
            HR_CUDNN_CHECK(cudnnGetConvolutionBackwardFilterAlgorithmMaxCount(h, &max));
            std::vector<cudnnConvolutionBwdFilterAlgoPerf_t> perf(static_cast<std::size_t>(std::max(max, 1)));
            HR_CUDNN_CHECK(cudnnGetConvolutionBackwardFilterAlgorithm_v7(h, plan->x.d, plan->y.d, plan->bwd_filter.d,
                                                                         plan->w.d, max, &got, perf.data()));
            found = heuristics_of(h, *plan, d, perf, got, fma);
        }
        std::optional<ConvCandidate> preferred;
        if (larger && !larger->dir[d].ranked.empty()) preferred = larger->dir[d].ranked.front();
        plan->dir[d].ranked = rank_candidates(found, rules, preferred);
        if (plan->dir[d].ranked.empty())
            throw Error(std::string("cuDNN has no ") + direction_name(d) + " algorithm for x " +
                        shape_str({g.N, g.C, g.H, g.W}) + ", w " + shape_str({g.K, g.C, g.kh, g.kw}) + ", " +
                        params_str(p) + ", " + dtype_name(dt) + " within the workspace limit of " +
                        format_bytes(rules.limit) + (fma ? " in strict f32 (FMA) math" : "") +
                        "; raise the limit, use --precision tf32, or use --device cpu");
    }
    ConvPlan& ref = *plan;
    conv_plans_.emplace(key, std::move(plan));
    return ref;
}

std::size_t CudaBackend::do_conv2d_workspace_bytes(const Shape& x, const Shape& w, const Shape& y, const Conv2dParams& p,
                                                DType dtype) const {
    auto lock = op_lock();
    return conv_plan(x, w, y, p, dtype).max_ws();
}

namespace {

// Runs direction d of `plan` with the first candidate that fits the workspace given; on an execution
// failure the next one (and the plan remembers to start there). `run(candidate, ws, ws_bytes)`
// returns cuDNN's status.
template <class Run>
void run_ranked(const char* op, cuda::ConvPlan& plan, int d, Tensor& workspace, const CudaBackend& be, Run&& run) {
    const std::size_t have = workspace.defined() ? workspace.nbytes() : 0;
    if (workspace.defined()) be.require_here(op, "workspace", workspace);
    void* ws = workspace.defined() ? workspace.raw() : nullptr;
    auto& ranked = plan.dir[d].ranked;
    std::string failures;
    for (std::size_t i = 0; i < ranked.size(); ++i) {
        const cuda::ConvCandidate& c = ranked[i];
        if (c.workspace > have) continue;  // a smaller batch than planned: pick one that fits
        const cudnnStatus_t st = run(c, c.workspace ? ws : nullptr, c.workspace);
        if (st == CUDNN_STATUS_SUCCESS) {
            if (i != 0 && !failures.empty()) {
                // remember the failure: start with the one that worked (it fits the planned workspace)
                const cuda::ConvCandidate good = c;
                ranked.erase(ranked.begin() + static_cast<std::ptrdiff_t>(i));
                ranked.insert(ranked.begin(), good);
            }
            return;
        }
        if (!cuda::is_execution_failure(static_cast<int>(st)))
            ::hr::cuda::throw_status("cuDNN", static_cast<int>(st), cudnnGetErrorString(st), op, __FILE__, __LINE__);
        (void)cudaGetLastError();
        failures += (failures.empty() ? "" : ", ") + std::string("algorithm ") + std::to_string(c.algo) + ": " +
                    cudnnGetErrorString(st);
    }
    fail(op, std::string("no cuDNN algorithm ran: ") + (failures.empty() ? "none fits" : failures) + " (workspace " +
                 desc(workspace) + " holds " + std::to_string(have) + " bytes; the first choice needs " +
                 std::to_string(plan.dir[d].planned_ws()) +
                 ": ask conv2d_workspace_bytes with the full batch and allocate that, category workspace)");
}

}  // namespace

void CudaBackend::do_conv2d_forward(const Tensor& x, const Tensor& w, const Tensor& bias, Tensor& y,
                                 const Conv2dParams& p, Tensor& workspace) {
    const char* op = "conv2d_forward";
    auto lock = op_lock();
    cuda::ConvPlan& plan = conv_plan(x.shape(), w.shape(), y.shape(), p, x.dtype());
    const float one = 1.0f, zero = 0.0f;
    run_ranked(op, plan, 0, workspace, *this, [&](const cuda::ConvCandidate& c, void* ws, std::size_t wsb) {
        (void)cudnnSetConvolutionMathType(plan.fwd.d, static_cast<cudnnMathType_t>(c.math_code));
        return cudnnConvolutionForward(cudnn_, &one, plan.x.d, x.raw(), plan.w.d, w.raw(), plan.fwd.d,
                                       static_cast<cudnnConvolutionFwdAlgo_t>(c.algo), ws, wsb, &zero, plan.y.d,
                                       y.raw());
    });
    if (bias.defined())
        cuda::add_bias(y.raw(), y.dtype(), bias.raw(), bias.dtype(), y.dim(0), y.dim(1), y.dim(2) * y.dim(3), compute_);
}

void CudaBackend::do_conv2d_backward_data(const Tensor& dy, const Tensor& w, Tensor& dx, const Conv2dParams& p,
                                       Tensor& workspace) {
    const char* op = "conv2d_backward_data";
    auto lock = op_lock();
    cuda::ConvPlan& plan = conv_plan(dx.shape(), w.shape(), dy.shape(), p, dy.dtype());
    const float one = 1.0f, zero = 0.0f;  // dx written
    run_ranked(op, plan, 1, workspace, *this, [&](const cuda::ConvCandidate& c, void* ws, std::size_t wsb) {
        (void)cudnnSetConvolutionMathType(plan.bwd_data.d, static_cast<cudnnMathType_t>(c.math_code));
        return cudnnConvolutionBackwardData(cudnn_, &one, plan.w.d, w.raw(), plan.y.d, dy.raw(), plan.bwd_data.d,
                                            static_cast<cudnnConvolutionBwdDataAlgo_t>(c.algo), ws, wsb, &zero,
                                            plan.x.d, dx.raw());
    });
}

void CudaBackend::do_conv2d_backward_filter(const Tensor& x, const Tensor& dy, Tensor& dw, Tensor& dbias,
                                         const Conv2dParams& p, Tensor& workspace) {
    const char* op = "conv2d_backward_filter";
    auto lock = op_lock();
    cuda::ConvPlan& plan = conv_plan(x.shape(), dw.shape(), dy.shape(), p, x.dtype());
    const bool want_db = dbias.defined();
    const float one = 1.0f;  // dw accumulated: beta = 1
    run_ranked(op, plan, 2, workspace, *this, [&](const cuda::ConvCandidate& c, void* ws, std::size_t wsb) {
        (void)cudnnSetConvolutionMathType(plan.bwd_filter.d, static_cast<cudnnMathType_t>(c.math_code));
        return cudnnConvolutionBackwardFilter(cudnn_, &one, plan.x.d, x.raw(), plan.y.d, dy.raw(), plan.bwd_filter.d,
                                              static_cast<cudnnConvolutionBwdFilterAlgo_t>(c.algo), ws, wsb, &one,
                                              plan.w.d, dw.raw());
    });
    if (want_db)
        cuda::bias_grad(dy.raw(), dy.dtype(), dbias.raw(), dbias.dtype(), dy.dim(0), dy.dim(1), dy.dim(2) * dy.dim(3),
                        scratch(), compute_);
}

}  // namespace hr
