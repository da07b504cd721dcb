#include "strategy/tp_head.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>

#include "base/dtype.h"
#include "base/error.h"

namespace hr {

TpHeadSlice tp_head_slice(std::int64_t total, int ranks, int rank) {
    TpHeadSlice s;
    s.ranks = ranks;
    s.rank = rank;
    s.total = total;
    s.first = s.first_of(rank);
    s.count = s.count_of(rank);
    return s;
}

std::int64_t tp_head_outputs(const ModelSpec& spec, int ranks) {
    const std::string n = std::to_string(ranks);
    if (spec.layers.empty())
        throw InputError(HR_MSG("tp_head.no_layers", "--tp-head %1: the model has no layers"), {n});
    const LayerSpec& last = spec.layers.back();
    std::int64_t outputs = 0;
    if (last.type == "linear") {
        outputs = last.attrs.value("out_features", std::int64_t{0});
    } else if (last.type == "lm_head") {
        if (last.attrs.value("tied", true))
            throw InputError(HR_MSG("tp_head.tied", "--tp-head %1 splits the language-model head's columns, but "
                                                    "this model's head is tied to the token embedding (it has no "
                                                    "weight of its own); set the lm_head's \"tied\" to false"),
                             {n});
        outputs = last.attrs.value("vocab_size", std::int64_t{0});
    } else {
        throw InputError(HR_MSG("tp_head.not_linear", "--tp-head %1 splits the last layer's output columns, but "
                                                      "this model ends with '%2'; end it with a linear layer or an "
                                                      "lm_head"),
                         {n, last.type});
    }
    if (spec.loss.type != "cross_entropy")
        throw InputError(HR_MSG("tp_head.mse", "--tp-head %1 computes a split softmax cross-entropy; the model's "
                                               "loss is '%2': use cross_entropy"),
                         {n, spec.loss.type});
    if (outputs < ranks)
        throw InputError(HR_MSG("tp_head.too_few_outputs", "--tp-head %1: the head has only %2 outputs, fewer than "
                                                           "the ranks; use at most %2 ranks"),
                         {n, std::to_string(outputs)});
    return outputs;
}

ModelSpec tp_head_spec(const ModelSpec& spec, const TpHeadSlice& slice) {
    ModelSpec s = spec;
    LayerSpec& last = s.layers.back();
    last.attrs[last.type == "linear" ? "out_features" : "vocab_size"] = slice.count;
    s.num_classes = static_cast<int>(slice.count);
    return s;
}

namespace {

double load_at(const void* p, DType dt, std::int64_t i) {
    switch (dt) {
    case DType::f32: return static_cast<const float*>(p)[i];
    case DType::f64: return static_cast<const double*>(p)[i];
    case DType::bf16: return bf16_to_f32(static_cast<const std::uint16_t*>(p)[i]);
    case DType::f16: return f16_to_f32(static_cast<const std::uint16_t*>(p)[i]);
    default: throw Error("internal: tensor-parallel cross-entropy on " + std::string(dtype_name(dt)) + " logits");
    }
}

void store_at(void* p, DType dt, std::int64_t i, double v) {
    switch (dt) {
    case DType::f32: static_cast<float*>(p)[i] = static_cast<float>(v); break;
    case DType::f64: static_cast<double*>(p)[i] = v; break;
    case DType::bf16: static_cast<std::uint16_t*>(p)[i] = f32_to_bf16(static_cast<float>(v)); break;
    case DType::f16: static_cast<std::uint16_t*>(p)[i] = f32_to_f16(static_cast<float>(v)); break;
    default: throw Error("internal: tensor-parallel cross-entropy on " + std::string(dtype_name(dt)) + " logits");
    }
}

}  // namespace

LossResult tp_cross_entropy(Backend& be, Communicator& comm, const TpHeadSlice& slice, const Tensor& logits,
                            const Tensor& labels, float label_smoothing, Tensor grad, float grad_scale,
                            TpLossBuffers& buf) {
    const std::int64_t C = slice.count, K = slice.total;
    if (logits.numel() % C != 0 || logits.dim(logits.ndim() - 1) != C)
        throw Error("internal: tensor-parallel logits " + shape_str(logits.shape()) + " for a slice of " +
                    std::to_string(C) + " columns");
    const std::int64_t N = logits.numel() / C;
    if (labels.numel() != N || labels.dtype() != DType::i64)
        throw Error("internal: tensor-parallel labels " + shape_str(labels.shape()) + " for " + std::to_string(N) +
                    " rows");
    if (buf.reduce.numel() < 3 * N) throw Error("internal: the tensor-parallel reduction buffer is too small");
    const bool want_grad = grad.defined();
    const DType dt = logits.dtype();
    const bool on_host = be.device().is_cpu();
    // the logits and labels on the host: the tensors themselves on the CPU, a copy in the staging buffer on a GPU
    const void* z = logits.raw();
    const std::int64_t* y = on_host ? labels.data<std::int64_t>() : nullptr;
    std::vector<std::int64_t> host_labels;
    if (!on_host) {
        if (!buf.staging.defined() || buf.staging.nbytes() < logits.nbytes())
            throw Error("internal: the tensor-parallel staging buffer is too small");
        be.copy_to_host(logits, buf.staging.raw());
        z = buf.staging.raw();
        host_labels.resize(static_cast<std::size_t>(N));
        be.copy_to_host(labels, host_labels.data());
        y = host_labels.data();
    }
    for (std::int64_t i = 0; i < N; ++i)
        if (y[i] < 0 || y[i] >= K)
            throw Error(HR_MSG("tp_head.bad_label", "label %1 in row %2 is outside [0, %3): the data's labels do not "
                                                    "match the model's classes; check num_classes and the data set"),
                        {std::to_string(y[i]), std::to_string(i), std::to_string(K)});
    float* red = buf.host.data<float>();
    auto reduce = [&](std::int64_t n, ReduceOp op) {  // red[0, n) over the ranks, in place
        Tensor d = buf.reduce.view(0, {n});
        if (!on_host) be.copy_from_host(red, d);
        comm.all_reduce(d, op).wait();
        comm.synchronize();
        if (!on_host) be.copy_to_host(d, red);
    };
    // rows are read into floats (every float dtype widens exactly), worked on, and written back
    const bool f32 = dt == DType::f32;
    std::vector<float> row(static_cast<std::size_t>(C));
    auto read_row = [&](std::int64_t r) -> const float* {
        if (f32) return static_cast<const float*>(z) + r * C;
        for (std::int64_t k = 0; k < C; ++k) row[static_cast<std::size_t>(k)] = static_cast<float>(load_at(z, dt, r * C + k));
        return row.data();
    };
    // 1. each row's maximum over every rank's columns (a NaN anywhere makes it NaN, as the loss then is)
    std::vector<float> mx(static_cast<std::size_t>(N));
    for (std::int64_t r = 0; r < N; ++r) {
        const float* v = read_row(r);
        float m = -std::numeric_limits<float>::infinity();
        for (std::int64_t k = 0; k < C; ++k) {
            if (v[k] != v[k]) {
                m = v[k];
                break;
            }
            m = std::max(m, v[k]);
        }
        red[r] = m;
    }
    reduce(N, ReduceOp::max);
    for (std::int64_t r = 0; r < N; ++r) mx[static_cast<std::size_t>(r)] = red[r];
    // 2. the first column holding the maximum, over every rank (torch.argmax's tie rule): max of -index
    for (std::int64_t r = 0; r < N; ++r) {
        const float m = mx[static_cast<std::size_t>(r)];
        const float* v = read_row(r);
        std::int64_t at = -1;
        for (std::int64_t k = 0; k < C && at < 0; ++k)
            if (v[k] == m || (m != m && v[k] != v[k])) at = k;
        red[r] = at < 0 ? -static_cast<float>(K) : -static_cast<float>(slice.first + at);
    }
    reduce(N, ReduceOp::max);
    std::vector<std::int64_t> arg(static_cast<std::size_t>(N));
    for (std::int64_t r = 0; r < N; ++r) arg[static_cast<std::size_t>(r)] = static_cast<std::int64_t>(-red[r]);
    // 3. sum exp(z - max), sum z and the target's logit (from the rank holding it), summed over the ranks.
    // An f32 gradient keeps exp(z - max) in its buffer for step 4 (one exp per element; the logits may be
    // that buffer: each element is read before it is written)
    void* out = nullptr;
    if (want_grad) out = on_host ? grad.raw() : buf.staging.raw();  // the staging copy of the logits is read first
    float* keep = want_grad && f32 ? static_cast<float*>(out) : nullptr;
    for (std::int64_t r = 0; r < N; ++r) {
        const float m = mx[static_cast<std::size_t>(r)];
        const float* v = read_row(r);
        const std::int64_t t = y[r] - slice.first;
        red[2 * N + r] = t >= 0 && t < C ? v[t] : 0.0f;
        double se = 0, zs = 0;
        float* e = keep ? keep + r * C : nullptr;
        for (std::int64_t k = 0; k < C; ++k) {
            const float x = v[k];
            const float ek = std::exp(x - m);
            se += ek;
            zs += x;
            if (e) e[k] = ek;
        }
        red[r] = static_cast<float>(se);
        red[N + r] = static_cast<float>(zs);
    }
    reduce(3 * N, ReduceOp::sum);
    // 4. the loss of each row and this rank's columns of its gradient: g (p - target), p = exp(z - lse)
    const double eps = label_smoothing;
    const double g = double(grad_scale) / double(std::max<std::int64_t>(N, 1));
    LossResult res;
    double total = 0;
    for (std::int64_t r = 0; r < N; ++r) {
        const float m = mx[static_cast<std::size_t>(r)];
        const double lse = double(m) + std::log(double(red[r]));
        const double nll = lse - double(red[2 * N + r]);
        const double smooth = lse - double(red[N + r]) / double(K);
        total += (1.0 - eps) * nll + eps * smooth;
        res.correct += arg[static_cast<std::size_t>(r)] == y[r] ? 1 : 0;
        if (!out) continue;
        const float scale = static_cast<float>(g / double(red[r]));  // g / sum exp(z - max)
        const float off = static_cast<float>(g * eps / double(K)), hit = static_cast<float>(g * (1.0 - eps));
        const std::int64_t t = y[r] - slice.first;
        if (keep) {
            float* o = keep + r * C;
            for (std::int64_t k = 0; k < C; ++k) o[k] = o[k] * scale - off;
            if (t >= 0 && t < C) o[t] -= hit;
        } else {
            const float* v = read_row(r);
            for (std::int64_t k = 0; k < C; ++k)
                store_at(out, dt, r * C + k, double(std::exp(v[k] - m) * scale - off) - (k == t ? double(hit) : 0.0));
        }
    }
    if (want_grad && !on_host) be.copy_from_host(buf.staging.raw(), grad);
    res.loss = N ? total / double(N) : 0.0;
    return res;
}

}  // namespace hr
