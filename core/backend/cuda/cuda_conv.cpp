// CudaBackend convolution through cuDNN 9's legacy convolution API (cudnnConvolutionForward,
// ...BackwardData, ...BackwardFilter: deprecated in cuDNN 9 but present; the graph API would be
// the replacement). Per shape (x, w, parameters, dtype, tf32) a plan holds the descriptors and the
// three algorithms, chosen once by cuDNN's heuristics (cudnnGet*Algorithm_v7: no trial runs, no
// allocations outside the ledger): the first algorithm that succeeds, fits the workspace limit and,
// when asked for, is deterministic. conv2d_workspace_bytes returns the largest of the three
// workspaces; the caller allocates it (category workspace) and passes it to each call.
//
// Math: f32 without tf32 uses CUDNN_FMA_MATH (no TF32 tensor cores, ~1e-6 relative error);
// with tf32, and for bf16/f16 data (f32 accumulation), tensor-core math is allowed.
#if defined(__GNUC__)
#pragma GCC diagnostic ignored "-Wdeprecated-declarations"
#endif
#include <algorithm>
#include <climits>
#include <vector>

#include "backend/cpu/cpu_common.h"
#include "backend/cuda/cuda_backend_impl.h"

namespace hr {

using cpu::desc;
using cpu::fail;
using cpu::ConvGeom;
using cpu::params_str;
using cpu::require_same_dtype;

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

struct ConvPlan {
    TensorDesc x, y;
    FilterDesc w;
    ConvDesc fwd, bwd_data, bwd_filter;  // one each: each direction sets its algorithm's math type
    cudnnConvolutionFwdAlgo_t fwd_algo{};
    cudnnConvolutionBwdDataAlgo_t bwd_data_algo{};
    cudnnConvolutionBwdFilterAlgo_t bwd_filter_algo{};
    std::size_t fwd_ws = 0, bwd_data_ws = 0, bwd_filter_ws = 0;
    std::size_t max_ws() const { return std::max({fwd_ws, bwd_data_ws, bwd_filter_ws}); }
};

void ConvPlanDeleter::operator()(ConvPlan* p) const { delete p; }

namespace {

// The shared checks (cpu_common.h), plus the GPU's 32-bit dimension limit.
ConvGeom gpu_conv_geom(const char* op, const Shape& x, const Shape& w, const Shape& y, const Conv2dParams& p) {
    ConvGeom g = cpu::conv_geom(op, x, w, y, p);
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

bool fma_only(DType dt, bool tf32) { return dt == DType::f32 && !tf32; }

bool math_allowed(cudnnMathType_t m, bool fma) {
    return !fma || (m != CUDNN_TENSOR_OP_MATH && m != CUDNN_TENSOR_OP_MATH_ALLOW_CONVERSION);
}

// Picks from heuristic results (sorted best first): fits the limit, math allowed, deterministic if
// wanted; else the first that fits and is allowed.
template <class Perf>
const Perf* pick(const std::vector<Perf>& perf, int count, std::size_t limit, bool fma, bool deterministic) {
    for (int pass = deterministic ? 0 : 1; pass < 2; ++pass)
        for (int i = 0; i < count; ++i) {
            const Perf& p = perf[i];
            if (p.status != CUDNN_STATUS_SUCCESS || p.memory > limit || !math_allowed(p.mathType, fma)) continue;
            if (pass == 0 && p.determinism != CUDNN_DETERMINISTIC) continue;
            return &p;
        }
    return nullptr;
}

[[noreturn]] void no_algorithm(const char* what, const ConvGeom& g, const Conv2dParams& p, DType dt, std::size_t limit) {
    throw Error(std::string("cuDNN has no ") + what + " algorithm for x " + shape_str({g.N, g.C, g.H, g.W}) + ", w " +
                shape_str({g.K, g.C, g.kh, g.kw}) + ", " + params_str(p) + ", " + dtype_name(dt) +
                " within the workspace limit of " + format_bytes(limit) + "; raise the limit or use --device cpu");
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
    const std::array<std::int64_t, 18> key{g.N,        g.C,        g.H,          g.W,          g.K,
                                           g.kh,       g.kw,       p.stride_h,   p.stride_w,   p.pad_h,
                                           p.pad_w,    p.dilation_h, p.dilation_w, static_cast<std::int64_t>(dt),
                                           tf32 ? 1 : 0, static_cast<std::int64_t>(options_.conv_workspace_limit),
                                           options_.deterministic ? 1 : 0, 0};
    std::lock_guard<std::mutex> lock(conv_mutex_);
    auto it = conv_plans_.find(key);
    if (it != conv_plans_.end()) return *it->second;

    activate();
    std::unique_ptr<ConvPlan, ConvPlanDeleter> plan(new ConvPlan);
    HR_CUDNN_CHECK(cudnnSetTensor4dDescriptor(plan->x.d, CUDNN_TENSOR_NCHW, type, int(g.N), int(g.C), int(g.H), int(g.W)));
    HR_CUDNN_CHECK(cudnnSetTensor4dDescriptor(plan->y.d, CUDNN_TENSOR_NCHW, type, int(g.N), int(g.K), int(g.Ho), int(g.Wo)));
    HR_CUDNN_CHECK(cudnnSetFilter4dDescriptor(plan->w.d, type, CUDNN_TENSOR_NCHW, int(g.K), int(g.C), int(g.kh), int(g.kw)));
    const bool fma = fma_only(dt, tf32);
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
    const std::size_t limit = options_.conv_workspace_limit;
    const bool det = options_.deterministic;
    {
        int max = 0, got = 0;
        HR_CUDNN_CHECK(cudnnGetConvolutionForwardAlgorithmMaxCount(h, &max));
        std::vector<cudnnConvolutionFwdAlgoPerf_t> perf(static_cast<std::size_t>(std::max(max, 1)));
        HR_CUDNN_CHECK(cudnnGetConvolutionForwardAlgorithm_v7(h, plan->x.d, plan->w.d, plan->fwd.d, plan->y.d, max, &got,
                                                              perf.data()));
        const auto* c = pick(perf, got, limit, fma, det);
        if (!c) no_algorithm("forward", g, p, dt, limit);
        plan->fwd_algo = c->algo;
        HR_CUDNN_CHECK(cudnnSetConvolutionMathType(plan->fwd.d, c->mathType));
        HR_CUDNN_CHECK(cudnnGetConvolutionForwardWorkspaceSize(h, plan->x.d, plan->w.d, plan->fwd.d, plan->y.d,
                                                               plan->fwd_algo, &plan->fwd_ws));
    }
    {
        int max = 0, got = 0;
        HR_CUDNN_CHECK(cudnnGetConvolutionBackwardDataAlgorithmMaxCount(h, &max));
        std::vector<cudnnConvolutionBwdDataAlgoPerf_t> perf(static_cast<std::size_t>(std::max(max, 1)));
        HR_CUDNN_CHECK(cudnnGetConvolutionBackwardDataAlgorithm_v7(h, plan->w.d, plan->y.d, plan->bwd_data.d, plan->x.d,
                                                                   max, &got, perf.data()));
        const auto* c = pick(perf, got, limit, fma, det);
        if (!c) no_algorithm("backward-data", g, p, dt, limit);
        plan->bwd_data_algo = c->algo;
        HR_CUDNN_CHECK(cudnnSetConvolutionMathType(plan->bwd_data.d, c->mathType));
        HR_CUDNN_CHECK(cudnnGetConvolutionBackwardDataWorkspaceSize(h, plan->w.d, plan->y.d, plan->bwd_data.d,
                                                                    plan->x.d, plan->bwd_data_algo,
                                                                    &plan->bwd_data_ws));
    }
    {
        int max = 0, got = 0;
        HR_CUDNN_CHECK(cudnnGetConvolutionBackwardFilterAlgorithmMaxCount(h, &max));
        std::vector<cudnnConvolutionBwdFilterAlgoPerf_t> perf(static_cast<std::size_t>(std::max(max, 1)));
        HR_CUDNN_CHECK(cudnnGetConvolutionBackwardFilterAlgorithm_v7(h, plan->x.d, plan->y.d, plan->bwd_filter.d,
                                                                     plan->w.d, max, &got, perf.data()));
        const auto* c = pick(perf, got, limit, fma, det);
        if (!c) no_algorithm("backward-filter", g, p, dt, limit);
        plan->bwd_filter_algo = c->algo;
        HR_CUDNN_CHECK(cudnnSetConvolutionMathType(plan->bwd_filter.d, c->mathType));
        HR_CUDNN_CHECK(cudnnGetConvolutionBackwardFilterWorkspaceSize(h, plan->x.d, plan->y.d, plan->bwd_filter.d,
                                                                      plan->w.d, plan->bwd_filter_algo,
                                                                      &plan->bwd_filter_ws));
    }
    ConvPlan& ref = *plan;
    conv_plans_.emplace(key, std::move(plan));
    return ref;
}

std::size_t CudaBackend::conv2d_workspace_bytes(const Shape& x, const Shape& w, const Shape& y, const Conv2dParams& p,
                                                DType dtype) const {
    return conv_plan(x, w, y, p, dtype).max_ws();
}

namespace {

// The workspace pointer for a call needing `need` bytes (null when none is needed).
void* workspace_ptr(const char* op, const CudaBackend& be, Tensor& workspace, std::size_t need) {
    if (need == 0) return workspace.defined() ? workspace.raw() : nullptr;
    if (!workspace.defined() || workspace.nbytes() < need)
        fail(op, "workspace " + desc(workspace) + " holds " + std::to_string(workspace.defined() ? workspace.nbytes() : 0) +
                     " bytes; needs " + std::to_string(need) +
                     " (ask conv2d_workspace_bytes with the same shapes and allocate that, category workspace)");
    be.require_here(op, "workspace", workspace);
    return workspace.raw();
}

}  // namespace

void CudaBackend::conv2d_forward(const Tensor& x, const Tensor& w, const Tensor& bias, Tensor& y,
                                 const Conv2dParams& p, Tensor& workspace) {
    const char* op = "conv2d_forward";
    require_here(op, "x", x);
    require_here(op, "w", w);
    require_here(op, "y", y);
    require_same_dtype(op, "x", x, "w", w);
    require_same_dtype(op, "x", x, "y", y);
    const cuda::ConvPlan& plan = conv_plan(x.shape(), w.shape(), y.shape(), p, x.dtype());
    if (bias.defined()) {
        require_here(op, "bias", bias);
        require_same_dtype(op, "x", x, "bias", bias);
        if (bias.numel() != w.dim(0)) fail(op, "bias " + desc(bias) + " must have shape (" + std::to_string(w.dim(0)) + ")");
    }
    void* ws = workspace_ptr(op, *this, workspace, plan.fwd_ws);
    activate();
    const float one = 1.0f, zero = 0.0f;
    HR_CUDNN_CHECK(cudnnConvolutionForward(cudnn_, &one, plan.x.d, x.raw(), plan.w.d, w.raw(), plan.fwd.d,
                                           plan.fwd_algo, ws, plan.fwd_ws, &zero, plan.y.d, y.raw()));
    if (bias.defined())
        cuda::add_bias(y.raw(), y.dtype(), bias.raw(), bias.dtype(), y.dim(0), y.dim(1), y.dim(2) * y.dim(3), compute_);
}

void CudaBackend::conv2d_backward_data(const Tensor& dy, const Tensor& w, Tensor& dx, const Conv2dParams& p,
                                       Tensor& workspace) {
    const char* op = "conv2d_backward_data";
    require_here(op, "dy", dy);
    require_here(op, "w", w);
    require_here(op, "dx", dx);
    require_same_dtype(op, "dy", dy, "w", w);
    require_same_dtype(op, "dy", dy, "dx", dx);
    const cuda::ConvPlan& plan = conv_plan(dx.shape(), w.shape(), dy.shape(), p, dy.dtype());
    void* ws = workspace_ptr(op, *this, workspace, plan.bwd_data_ws);
    activate();
    const float one = 1.0f, zero = 0.0f;  // dx written
    HR_CUDNN_CHECK(cudnnConvolutionBackwardData(cudnn_, &one, plan.w.d, w.raw(), plan.y.d, dy.raw(), plan.bwd_data.d,
                                                plan.bwd_data_algo, ws, plan.bwd_data_ws, &zero, plan.x.d, dx.raw()));
}

void CudaBackend::conv2d_backward_filter(const Tensor& x, const Tensor& dy, Tensor& dw, Tensor& dbias,
                                         const Conv2dParams& p, Tensor& workspace) {
    const char* op = "conv2d_backward_filter";
    require_here(op, "x", x);
    require_here(op, "dy", dy);
    require_here(op, "dw", dw);
    require_same_dtype(op, "x", x, "dy", dy);
    require_same_dtype(op, "x", x, "dw", dw);
    const cuda::ConvPlan& plan = conv_plan(x.shape(), dw.shape(), dy.shape(), p, x.dtype());
    const bool want_db = dbias.defined();
    if (want_db) {
        require_here(op, "dbias", dbias);
        require_same_dtype(op, "x", x, "dbias", dbias);
        if (dbias.numel() != dw.dim(0))
            fail(op, "dbias " + desc(dbias) + " must have shape (" + std::to_string(dw.dim(0)) + ")");
    }
    void* ws = workspace_ptr(op, *this, workspace, plan.bwd_filter_ws);
    activate();
    const float one = 1.0f;  // dw accumulated: beta = 1
    HR_CUDNN_CHECK(cudnnConvolutionBackwardFilter(cudnn_, &one, plan.x.d, x.raw(), plan.y.d, dy.raw(),
                                                  plan.bwd_filter.d, plan.bwd_filter_algo, ws, plan.bwd_filter_ws,
                                                  &one, plan.w.d, dw.raw()));
    if (want_db)
        cuda::bias_grad(dy.raw(), dy.dtype(), dbias.raw(), dbias.dtype(), dy.dim(0), dy.dim(1), dy.dim(2) * dy.dim(3),
                        compute_);
}

}  // namespace hr
