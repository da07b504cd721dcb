// The LLaMA family's ops on the GPU against the CPU backend (the reference, gradchecked and compared with
// PyTorch in tests/unit/test_llama_layers.cpp): one llama_block with grouped-query attention (4 query heads
// sharing 2 key/value heads, the planes layout), Llama 3's rope scaling and q/k/v biases, forward and
// backward through the Layer API in f32 (RMSNorm, rope_apply and its inverse, SwiGLU, the attention's
// per-KV-head dK/dV kernel), and twice on the GPU bit for bit. Skips without a CUDA device.
#include <QtTest/QtTest>

#include <cmath>
#include <random>
#include <vector>

#include "backend/cpu/cpu_backend.h"
#include "backend/cuda/cuda_backend.h"
#include "train/device.h"
#include "nn/layer.h"
#include "nn/model_spec.h"

using namespace hr;

namespace {

struct BlockRun {
    std::vector<std::vector<float>> outputs;  // y, dx, then every parameter gradient
};

BlockRun run_block(Backend& be, const LayerSpec& spec, std::int64_t B, std::int64_t T, std::int64_t C) {
    std::mt19937 g(5);
    std::uniform_real_distribution<float> d(-0.5f, 0.5f);
    auto layer = make_layer(spec);
    const Shape in{T, C};
    auto make = [&](const Shape& s, DType dt = DType::f32) { return Tensor::empty(be.allocator(), s, dt, MemCategory::other); };
    auto fill = [&](Tensor& t) {
        std::vector<float> v(static_cast<std::size_t>(t.numel()));
        for (float& x : v) x = d(g);
        be.copy_from_host(v.data(), t);
    };
    LayerIO io;
    io.backend = &be;
    io.x = make(with_batch(B, in));
    io.y = make(with_batch(B, in));
    io.dy = make(with_batch(B, in));
    io.dx = make(with_batch(B, in));
    fill(io.x);
    fill(io.dy);
    for (const ParamDecl& p : layer->params(in)) {
        io.params.push_back(make(p.shape));
        fill(io.params.back());
        io.grads.push_back(make(p.shape));
        be.fill(io.grads.back(), 0.0);
    }
    for (const SavedDecl& s : layer->saved(B, in)) io.saved.push_back(make(s.shape, s.compute_dtype ? DType::f32 : s.dtype));
    const std::size_t ws = layer->workspace_bytes(be, B, in, DType::f32);
    if (ws) io.workspace = make({static_cast<std::int64_t>(ws)}, DType::u8);
    layer->forward(io);
    layer->backward(io);
    be.synchronize();
    BlockRun r;
    std::vector<const Tensor*> outs{&io.y, &io.dx};
    for (const Tensor& t : io.grads) outs.push_back(&t);
    for (const Tensor* t : outs) {
        std::vector<float> v(static_cast<std::size_t>(t->numel()));
        be.copy_to_host(*t, v.data());
        r.outputs.push_back(std::move(v));
    }
    return r;
}

LayerSpec block_spec() {
    LayerSpec s = default_layer("llama_block");
    s.attrs["dim"] = 64;
    s.attrs["heads"] = 4;
    s.attrs["kv_heads"] = 2;
    s.attrs["hidden"] = 96;
    s.attrs["rope_theta"] = 500000.0;
    s.attrs["rope_factor"] = 32.0;
    s.attrs["qkv_bias"] = true;
    s.attrs["max_positions"] = 128;
    return s;
}

}  // namespace

class CudaLlamaTest : public QObject {
    Q_OBJECT

private slots:
    void blockMatchesCpu() {
        if (cuda_device_count() < 1) QSKIP("no GPU here: the LLaMA kernels are checked on a GPU machine");
        auto gpu = make_backend("cuda:0", 0, std::make_shared<MemoryLedger>(), false, nullptr);
        auto cpu = make_cpu_backend(2, std::make_shared<MemoryLedger>());
        const std::int64_t B = 2, T = 70, C = 64;  // T past two 32-row tiles
        const BlockRun want = run_block(*cpu, block_spec(), B, T, C);
        const BlockRun got = run_block(*gpu, block_spec(), B, T, C);
        const BlockRun again = run_block(*gpu, block_spec(), B, T, C);
        QCOMPARE(got.outputs.size(), want.outputs.size());
        for (std::size_t k = 0; k < want.outputs.size(); ++k) {
            double scale = 0, e = 0;
            for (std::size_t i = 0; i < want.outputs[k].size(); ++i) {
                scale = std::max(scale, std::abs(double(want.outputs[k][i])));
                e = std::max(e, std::abs(double(got.outputs[k][i]) - double(want.outputs[k][i])));
            }
            QVERIFY2(e <= 2e-4 * std::max(scale, 1e-3), qPrintable(QStringLiteral("output %1: %2 of %3").arg(k).arg(e).arg(scale)));
            QVERIFY2(got.outputs[k] == again.outputs[k], qPrintable(QStringLiteral("output %1 differs run to run").arg(k)));
        }
    }
};

QTEST_GUILESS_MAIN(CudaLlamaTest)
#include "test_cuda_llama.moc"
