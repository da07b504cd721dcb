#pragma once
// Driving TrainingState step by step as the trainer will (training_state.h's recipe), for the dist
// tests: one rank's share of a global batch, or one process on the whole batch (the reference).
#include <cmath>
#include <cstring>
#include <map>
#include <random>
#include <string>
#include <vector>

#include "backend/cpu/cpu_backend.h"
#include "nn/compression.h"
#include "strategy/training_state.h"

namespace hrtest {

using namespace hr;

// The global batch of step `step`: the same on every rank (seeded by the step), different each step.
inline void global_batch(const ModelSpec& spec, std::int64_t B, std::uint64_t step, std::vector<float>& x,
                         std::vector<std::int64_t>& y) {
    std::mt19937_64 g(1000 + step);
    std::normal_distribution<float> d(0, 1);
    x.resize(static_cast<std::size_t>(B * shape_numel(spec.input_shape)));
    for (auto& v : x) v = d(g);
    y.resize(static_cast<std::size_t>(B));
    for (auto& l : y) l = static_cast<std::int64_t>(g() % static_cast<std::uint64_t>(spec.num_classes));
}

struct Trainee {
    std::shared_ptr<MemoryLedger> ledger = std::make_shared<MemoryLedger>();
    std::shared_ptr<MemoryLedger> host_ledger = std::make_shared<MemoryLedger>();
    std::unique_ptr<Backend> be = make_cpu_backend(1, ledger);
    std::unique_ptr<Backend> host = make_cpu_backend(1, host_ledger);
    std::unique_ptr<TrainingState> st;
    ModelSpec spec;
    double lr = 0.05;  // the optimizer config's

    // world_size/rank from `comm` (null: one process). `device`: the training backend (default: one CPU
    // thread on `ledger`; give one made on `ledger` for a GPU).
    Trainee(const ModelSpec& s, const StrategyConfig& sc, std::int64_t batch, const OptimizerConfig& o,
            Communicator* comm, std::unique_ptr<Backend> device = nullptr)
        : spec(s), lr(o.lr) {
        if (device) be = std::move(device);
        const int N = comm ? comm->world_size() : 1, r = comm ? comm->rank() : 0;
        st = std::make_unique<TrainingState>(spec, o, resolve_strategy(sc, spec, batch, N, r), 7, *be, be->allocator(),
                                             *host, host->allocator(), false, comm);
    }

    // One optimizer step on this rank's rows of the global batch; returns this rank's share of the loss.
    double step(std::uint64_t step_no) {
        const ResolvedStrategy& s = st->strategy();
        std::vector<float> x;
        std::vector<std::int64_t> y;
        global_batch(spec, s.batch, step_no, x, y);
        const std::int64_t per = shape_numel(spec.input_shape);
        Model& m = st->model();
        st->begin_step();
        double loss = 0;
        for (auto [r0, n] : s.micro_batches()) {
            const std::int64_t row = s.sample_offset + r0;
            Tensor xs = st->x_staging.slice0(0, n), yb = st->labels.slice0(0, n);
            be->copy_from_host(x.data() + row * per, xs);
            be->copy_from_host(y.data() + row, yb);
            Tensor xm = xs;
            if (st->x_model.dtype() != DType::f32) {
                xm = st->x_model.slice0(0, n);
                be->copy(xs, xm);
            }
            Tensor logits = m.forward(xm, true, st->first_sample(static_cast<std::int64_t>(step_no), r0));
            Tensor g = st->dlogits.slice0(0, n);
            const float k = st->loss_grad_scale(n);
            // a split head: the vocab-parallel loss over this rank's columns (strategy/tp_head.h)
            const LossResult lr_ = st->tp_head() ? st->tp_loss(logits, yb, g, k)
                                                 : be->softmax_cross_entropy(logits, yb, float(spec.loss.label_smoothing), g, k);
            loss += lr_.loss * double(n) / double(s.batch);
            m.backward(g);
        }
        st->optimizer_step(lr);
        return loss;
    }

    // name -> values as f32 (trainable tensors of the consolidated state, or the buffers and frozen tensors;
    // a quantised base weight's values, dequantised)
    std::map<std::string, std::vector<float>> weights(bool trainable = true) {
        std::map<std::string, std::vector<float>> out;
        for (NamedTensor& t : st->consolidated_state_dict(be->allocator())) {
            if (t.trainable != trainable) continue;
            std::vector<float> v(static_cast<std::size_t>(t.tensor.numel()));
            if (t.quantized()) {
                std::vector<std::uint8_t> packed(t.tensor.nbytes());
                be->copy_to_host(t.tensor, packed.data());
                v.assign(static_cast<std::size_t>(shape_numel(t.quantized_shape)), 0.0f);
                dequantize_packed(packed.data(), t.quantized_shape[0], t.quantized_shape[1], t.quantized_bits,
                                  t.quantized_group, v.data());
            } else if (t.tensor.dtype() == DType::f32) {
                be->copy_to_host(t.tensor, v.data());
            } else if (t.tensor.dtype() == DType::bf16 || t.tensor.dtype() == DType::f16) {
                std::vector<std::uint16_t> h(v.size());
                be->copy_to_host(t.tensor, h.data());
                for (std::size_t i = 0; i < v.size(); ++i)
                    v[i] = t.tensor.dtype() == DType::bf16 ? bf16_to_f32(h[i]) : f16_to_f32(h[i]);
            } else {
                continue;  // integer buffers (num_batches_tracked)
            }
            out[t.name] = std::move(v);
        }
        return out;
    }
};

// Largest |a - b| over a tensor divided by the largest |b| in it, worst tensor; "" names it.
inline double worst_relative(const std::map<std::string, std::vector<float>>& a,
                             const std::map<std::string, std::vector<float>>& b, std::string* which = nullptr) {
    double worst = a.size() == b.size() ? 0.0 : INFINITY;
    for (const auto& [name, va] : a) {
        auto it = b.find(name);
        if (it == b.end() || it->second.size() != va.size()) return INFINITY;
        double diff = 0, scale = 1e-30;
        for (std::size_t i = 0; i < va.size(); ++i) {
            diff = std::max(diff, double(std::abs(va[i] - it->second[i])));
            scale = std::max(scale, double(std::abs(it->second[i])));
        }
        if (diff / scale > worst) {
            worst = diff / scale;
            if (which) *which = name;
        }
    }
    return worst;
}

inline bool bit_identical(const std::map<std::string, std::vector<float>>& a,
                          const std::map<std::string, std::vector<float>>& b) {
    if (a.size() != b.size()) return false;
    for (const auto& [name, va] : a) {
        auto it = b.find(name);
        if (it == b.end() || it->second.size() != va.size() ||
            std::memcmp(va.data(), it->second.data(), va.size() * sizeof(float)) != 0)
            return false;
    }
    return true;
}

inline ModelSpec mlp_with_dropout() {
    ModelSpec s = preset_model("mlp");
    LayerSpec d = default_layer("dropout");
    d.attrs["p"] = 0.25;
    s.layers.insert(s.layers.begin() + 3, d);  // after the first linear + relu
    s.name = "mlp+dropout";
    return s;
}

}  // namespace hrtest
