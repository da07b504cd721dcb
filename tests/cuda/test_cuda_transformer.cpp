// The CUDA transformer ops against the CPU backend (the reference, itself gradchecked and compared with
// PyTorch in tests/unit): embeddings, LayerNorm, GELU (tanh), flash-style attention forward and backward
// (causal and not, with and without dropout, heads 1 and more, T not a multiple of any tile, head sizes
// that take each kernel variant), the in-place cross-entropy over GPT-2's vocabulary, row copies and
// transposes; f32 with tight tolerances, bf16/f16 loose. Every gradient is bit-identical run to run
// (no float atomics). Then a small GPT trained for a few steps on the GPU against the same run on the
// CPU (losses), twice on the GPU (bitwise), and the planner's GPU prediction against its ledger. Broken
// calls are refused with the CPU's messages (the shared contract).
// Skips without a CUDA device.
#include <QtTest/QtTest>

#include <cmath>
#include <cstring>
#include <fstream>
#include <random>
#include <vector>

#include "backend/cpu/cpu_backend.h"
#include "backend/cuda/cuda_backend.h"
#include "backend/cuda/cuda_sizes.h"
#include "base/dtype.h"
#include "base/error.h"
#include "nn/model_spec.h"
#include "plan/device_description.h"
#include "op_diff.h"
#include "plan/planner.h"
#include "test_support.h"
#include "transformer_contract.h"
#include "train/trainer.h"

using namespace hr;
using Vec = std::vector<double>;

namespace {

std::mt19937_64& rng() {
    static std::mt19937_64 g(77);
    return g;
}

Vec random_vec(std::int64_t n, double lo = -1.0, double hi = 1.0) {
    std::uniform_real_distribution<double> d(lo, hi);
    Vec v(static_cast<std::size_t>(n));
    for (auto& x : v) x = d(rng());
    return v;
}

void write_host(void* p, DType dt, const Vec& v) {
    for (std::size_t i = 0; i < v.size(); ++i) {
        switch (dt) {
            case DType::f32: static_cast<float*>(p)[i] = float(v[i]); break;
            case DType::bf16: static_cast<std::uint16_t*>(p)[i] = f32_to_bf16(float(v[i])); break;
            case DType::f16: static_cast<std::uint16_t*>(p)[i] = f32_to_f16(float(v[i])); break;
            case DType::i64: static_cast<std::int64_t*>(p)[i] = std::int64_t(v[i]); break;
            default: qFatal("write_host: dtype not used here");
        }
    }
}

Vec read_host(const void* p, DType dt, std::int64_t n) {
    Vec v(static_cast<std::size_t>(n));
    for (std::int64_t i = 0; i < n; ++i) {
        switch (dt) {
            case DType::f32: v[i] = static_cast<const float*>(p)[i]; break;
            case DType::bf16: v[i] = bf16_to_f32(static_cast<const std::uint16_t*>(p)[i]); break;
            case DType::f16: v[i] = f16_to_f32(static_cast<const std::uint16_t*>(p)[i]); break;
            case DType::i64: v[i] = double(static_cast<const std::int64_t*>(p)[i]); break;
            default: qFatal("read_host: dtype not used here");
        }
    }
    return v;
}

// |got - want| <= tol * max|want| elementwise (no floor: an all-zero result fails); NaN fails.
bool close(const Vec& got, const Vec& want, double tol, const QString& what) {
    if (got.size() != want.size()) {
        qWarning("%s: size %zu vs %zu", qPrintable(what), got.size(), want.size());
        return false;
    }
    const double scale = hrtest::record_comparison(got, want, tol, what);  // the op-diff line's figure (op_diff.h)
    for (std::size_t i = 0; i < got.size(); ++i) {
        const double d = std::abs(got[i] - want[i]);
        if (!(d <= tol * scale)) {
            qWarning("%s: element %zu: gpu %.9g, cpu %.9g (|diff| %.3g > %.3g)", qPrintable(what), i, got[i], want[i], d,
                     tol * scale);
            return false;
        }
    }
    return true;
}

double tol_for(DType dt, double f32 = 1e-5) { return dt == DType::f32 ? f32 : 2e-2; }
QString dn(DType dt) { return QString::fromStdString(dtype_name(dt)); }

struct Pair {
    Tensor c, g;
};

class Harness {
public:
    std::unique_ptr<Backend> cpu = make_cpu_backend(2, std::make_shared<MemoryLedger>());
    std::unique_ptr<Backend> gpu;

    Pair make(const Shape& s, DType dt, const Vec& v) {
        Tensor c = Tensor::empty(cpu->allocator(), s, dt, MemCategory::other);
        write_host(c.raw(), dt, v);
        Tensor g = Tensor::empty(gpu->allocator(), s, dt, MemCategory::other);
        gpu->copy_from_host(c.raw(), g);
        return {c, g};
    }
    Pair rnd(const Shape& s, DType dt, double lo = -1.0, double hi = 1.0) {
        return make(s, dt, random_vec(shape_numel(s), lo, hi));
    }
    Pair zeros(const Shape& s, DType dt) {
        Pair p{Tensor::empty(cpu->allocator(), s, dt, MemCategory::other),
               Tensor::empty(gpu->allocator(), s, dt, MemCategory::other)};
        cpu->fill(p.c, 0.0);
        gpu->fill(p.g, 0.0);
        return p;
    }
    Pair ids(const Shape& s, std::int64_t V) {
        std::uniform_int_distribution<std::int64_t> d(0, V - 1);
        Vec v(static_cast<std::size_t>(shape_numel(s)));
        for (auto& x : v) x = double(d(rng()));
        return make(s, DType::i64, v);
    }
    Tensor bytes_cpu(std::size_t n) {
        return Tensor::empty(cpu->allocator(), {static_cast<std::int64_t>(std::max<std::size_t>(n, 1))}, DType::u8,
                             MemCategory::workspace);
    }
    Tensor bytes_gpu(std::size_t n) {
        return Tensor::empty(gpu->allocator(), {static_cast<std::int64_t>(std::max<std::size_t>(n, 1))}, DType::u8,
                             MemCategory::workspace);
    }
    Vec read_gpu(const Tensor& g) {
        std::vector<unsigned char> buf(g.nbytes() + 1);
        gpu->copy_to_host(g, buf.data());
        return read_host(buf.data(), g.dtype(), g.numel());
    }
    std::vector<unsigned char> raw_gpu(const Tensor& g) {
        std::vector<unsigned char> buf(g.nbytes());
        gpu->copy_to_host(g, buf.data());
        return buf;
    }
    static Vec read_cpu(const Tensor& c) { return read_host(c.raw(), c.dtype(), c.numel()); }
    bool same(const Pair& p, double tol, const QString& what) { return close(read_gpu(p.g), read_cpu(p.c), tol, what); }
};

const DType kFloatTypes[] = {DType::f32, DType::bf16, DType::f16};

LayerSpec L(const std::string& type, std::initializer_list<std::pair<const char*, nlohmann::json>> a = {}) {
    LayerSpec s = default_layer(type);
    for (auto& [k, v] : a) s.attrs[k] = v;
    return s;
}

ModelSpec small_gpt() {
    ModelSpec s;
    s.name = "gpt-cuda-test";
    s.input_shape = {40};
    s.num_classes = 256;
    s.layers = {L("token_embedding", {{"vocab_size", 256}, {"dim", 64}}),
                L("position_embedding", {{"max_positions", 64}, {"dim", 64}}),
                L("dropout", {{"p", 0.0}}),
                L("transformer_block", {{"dim", 64}, {"heads", 2}}),
                L("transformer_block", {{"dim", 64}, {"heads", 2}}),
                L("layernorm", {{"dim", 64}}),
                L("lm_head", {{"dim", 64}, {"vocab_size", 256}})};
    return s;
}

std::string text_file() {
    static const std::string path = [] {
        const std::string dir = hrtest::temp_dir("cuda-lm-text");
        std::ofstream f(dir + "/abc.txt");
        for (int i = 0; i < 3000; ++i) f << "abcabc " << char('a' + i % 3) << "xyz\n";
        return dir + "/abc.txt";
    }();
    return path;
}

TrainConfig lm_config(const std::string& device, const std::string& precision = "fp32") {
    TrainConfig c;
    c.model = small_gpt();
    c.data = "text:" + text_file();
    c.steps = 8;
    c.batch = 4;
    c.threads = 2;
    c.seed = 5;
    c.optimizer.kind = "adamw";
    c.optimizer.lr = 3e-3;
    c.optimizer.weight_decay = 0.1;
    c.optimizer.grad_clip = 1.0;
    c.seq = 37;  // not a multiple of any attention tile
    c.tokenizer = "byte";
    c.eval_every = 0;
    c.eval_tokens = 1024;
    c.device = device;
    c.strategy.precision = precision;
    return c;
}

}  // namespace

class CudaTransformerTest : public QObject {
    Q_OBJECT

    std::unique_ptr<Harness> h;

    void attention_case(DType dt, std::int64_t B, std::int64_t T, std::int64_t C, int H, bool causal, float dropout) {
        const QString what = QString("attention %1 B%2 T%3 C%4 H%5 causal %6 dropout %7")
                                 .arg(dn(dt)).arg(B).arg(T).arg(C).arg(H).arg(causal).arg(dropout);
        AttentionParams p;
        p.heads = H;
        p.causal = causal;
        p.dropout = dropout;
        p.seed = 1234;
        p.offset = 99;
        Pair qkv = h->rnd({B, T, 3 * C}, dt, -2.0, 2.0);
        Pair out = h->zeros({B, T, C}, dt), lse = h->zeros({B, H, T}, DType::f32);
        Tensor wc = h->bytes_cpu(h->cpu->attention_workspace_bytes(B, T, C, H, dt));
        Tensor wg = h->bytes_gpu(h->gpu->attention_workspace_bytes(B, T, C, H, dt));
        h->cpu->attention_forward(qkv.c, out.c, lse.c, p, wc);
        h->gpu->attention_forward(qkv.g, out.g, lse.g, p, wg);
        QVERIFY(h->same(out, tol_for(dt, 1e-5), what + " out"));
        QVERIFY(h->same(lse, dt == DType::f32 ? 1e-6 : 1e-2, what + " lse"));
        Pair dout = h->rnd({B, T, C}, dt);
        Pair dqkv = h->rnd({B, T, 3 * C}, dt);  // garbage first: backward writes every element
        h->cpu->attention_backward(qkv.c, out.c, lse.c, dout.c, dqkv.c, p, wc);
        h->gpu->attention_backward(qkv.g, out.g, lse.g, dout.g, dqkv.g, p, wg);
        QVERIFY(h->same(dqkv, tol_for(dt, 2e-5), what + " dqkv"));
        // bit-identical run to run
        const auto first = h->raw_gpu(dqkv.g);
        h->gpu->attention_backward(qkv.g, out.g, lse.g, dout.g, dqkv.g, p, wg);
        QVERIFY2(h->raw_gpu(dqkv.g) == first, qPrintable(what + ": backward differs between two runs"));
    }

private slots:
    // every comparison of the function that just ran: its largest difference per op and dtype (op_diff.h)
    void cleanup() { hrtest::print_op_diffs(); }

    void initTestCase() {
        if (cuda_device_count() > 0) {
            h = std::make_unique<Harness>();
            h->gpu = make_cuda_backend(0, std::make_shared<MemoryLedger>());
            qInfo("GPU backend: %s", h->gpu->name().c_str());
        }
    }

    // --- runs everywhere ----------------------------------------------------------------------------

    // A plan for a GPU that is not present counts the CUDA kernels' attention scratch (one f32 D_i per
    // row and head, cuda_sizes.h), not the CPU's per-thread tiles: B 8, T 1024, 12 heads = 384 KiB.
    void plannerCountsTheGpuAttentionScratch() {
        const DeviceDescription d = describe_device("h100");
        auto be = make_planning_backend(d, 2, std::make_shared<MemoryLedger>());
        QCOMPARE(be->attention_workspace_bytes(8, 1024, 768, 12, DType::bf16), std::size_t(8 * 12 * 1024 * 4));
        QCOMPARE(cuda_sizes::attention_workspace_bytes(1, 3, 8, 2), std::size_t(256));  // rounded up to 256 bytes
        const DeviceDescription c = describe_device("cpu", 2);
        auto cb = make_planning_backend(c, 2, std::make_shared<MemoryLedger>());
        auto cpu = make_cpu_backend(2, std::make_shared<MemoryLedger>());
        QCOMPARE(cb->attention_workspace_bytes(8, 1024, 768, 12, DType::bf16),
                 cpu->attention_workspace_bytes(8, 1024, 768, 12, DType::bf16));
    }

    // --- on a GPU ------------------------------------------------------------------------------------

    // The shared argument contract (backend/cpu/transformer_checks.h): every broken call of
    // tests/support/transformer_contract.h is refused on the GPU with the CPU's very message.
    void refusalsAreTheCpus() {
        if (!h) QSKIP("no CUDA device (cuda_device_count() == 0)");
        for (const hrtest::ContractCase& c : hrtest::transformer_contract_cases()) {
            std::string cpu_message, gpu_message;
            try {
                c.call(*h->cpu);
            } catch (const Error& e) {
                cpu_message = e.what();
            }
            try {
                c.call(*h->gpu);
            } catch (const Error& e) {
                gpu_message = e.what();
            }
            QVERIFY2(!cpu_message.empty(), c.name.c_str());
            if (!c.same_text) {
                QVERIFY2(gpu_message.find(c.phrase) != std::string::npos, (c.name + ": " + gpu_message).c_str());
                continue;
            }
            QVERIFY2(gpu_message == cpu_message, qPrintable(QString::fromStdString(c.name + ": GPU '" + gpu_message +
                                                                                    "', CPU '" + cpu_message + "'")));
        }
    }

    void embeddingMatchesTheCpu() {
        if (!h) QSKIP("no CUDA device (cuda_device_count() == 0)");
        struct Case {
            std::int64_t V, C, B, T;
        };
        // the last one has more positions than one sort chunk (32768)
        for (const Case k : {Case{50, 48, 3, 17}, Case{1000, 96, 2, 64}, Case{300, 8, 40, 1001}})
            for (DType dt : kFloatTypes) {
                const QString what = QString("embedding %1 V%2 C%3 N%4").arg(dn(dt)).arg(k.V).arg(k.C).arg(k.B * k.T);
                Pair ids = h->ids({k.B, k.T}, k.V);
                Pair table = h->rnd({k.V, k.C}, dt);
                Pair y = h->zeros({k.B, k.T, k.C}, dt);
                h->cpu->embedding_forward(ids.c, table.c, y.c);
                h->gpu->embedding_forward(ids.g, table.g, y.g);
                QVERIFY(h->same(y, 0.0, what + " forward (a copy: exact)"));
                Pair dy = h->rnd({k.B, k.T, k.C}, dt);
                Pair dt_ = h->rnd({k.V, k.C}, dt);  // accumulated into
                h->cpu->embedding_backward(ids.c, dy.c, dt_.c);
                h->gpu->embedding_backward(ids.g, dy.g, dt_.g);
                QVERIFY(h->same(dt_, tol_for(dt, 1e-6), what + " backward"));
                // deterministic: the same accumulation from the same start gives the same bits
                Pair again = h->make({k.V, k.C}, dt, h->read_cpu(table.c));
                Pair again2 = h->make({k.V, k.C}, dt, h->read_cpu(table.c));
                h->gpu->embedding_backward(ids.g, dy.g, again.g);
                h->gpu->embedding_backward(ids.g, dy.g, again2.g);
                QVERIFY2(h->raw_gpu(again.g) == h->raw_gpu(again2.g), qPrintable(what + ": backward not bit-identical"));
            }
    }

    void layernormMatchesTheCpu() {
        if (!h) QSKIP("no CUDA device (cuda_device_count() == 0)");
        struct Case {
            std::int64_t R, C;
            bool bias;
        };
        for (const Case k : {Case{37, 48, true}, Case{5, 768, true}, Case{1000, 64, false}, Case{3, 33, true}})
            for (DType dt : kFloatTypes) {
                const QString what = QString("layernorm %1 R%2 C%3 bias %4").arg(dn(dt)).arg(k.R).arg(k.C).arg(k.bias);
                Pair x = h->rnd({k.R, k.C}, dt, -3.0, 3.0);
                Pair g = h->rnd({k.C}, DType::f32, 0.5, 1.5);
                Pair b = k.bias ? h->rnd({k.C}, DType::f32) : Pair{};
                Pair y = h->zeros({k.R, k.C}, dt), mean = h->zeros({k.R}, DType::f32), rstd = h->zeros({k.R}, DType::f32);
                h->cpu->layernorm_forward(x.c, g.c, b.c, 1e-5f, y.c, mean.c, rstd.c);
                h->gpu->layernorm_forward(x.g, g.g, b.g, 1e-5f, y.g, mean.g, rstd.g);
                QVERIFY(h->same(y, tol_for(dt), what + " y"));
                QVERIFY(h->same(mean, 1e-5, what + " mean"));
                QVERIFY(h->same(rstd, 1e-5, what + " rstd"));
                Pair dy = h->rnd({k.R, k.C}, dt);
                Pair dx = h->rnd({k.R, k.C}, dt);
                Pair dg = h->rnd({k.C}, DType::f32), db = k.bias ? h->rnd({k.C}, DType::f32) : Pair{};
                h->cpu->layernorm_backward(x.c, dy.c, g.c, mean.c, rstd.c, dx.c, dg.c, db.c);
                h->gpu->layernorm_backward(x.g, dy.g, g.g, mean.g, rstd.g, dx.g, dg.g, db.g);
                QVERIFY(h->same(dx, tol_for(dt, 1e-5), what + " dx"));
                QVERIFY(h->same(dg, tol_for(dt, 1e-5), what + " dgamma"));
                if (k.bias) QVERIFY(h->same(db, tol_for(dt, 1e-5), what + " dbeta"));
                Pair dg2 = h->make({k.C}, DType::f32, h->read_cpu(dg.c));  // any start: compare two runs from it
                Pair dg3 = h->make({k.C}, DType::f32, h->read_cpu(dg.c));
                h->gpu->layernorm_backward(x.g, dy.g, g.g, mean.g, rstd.g, dx.g, dg2.g, db.g);
                h->gpu->layernorm_backward(x.g, dy.g, g.g, mean.g, rstd.g, dx.g, dg3.g, db.g);
                QVERIFY2(h->raw_gpu(dg2.g) == h->raw_gpu(dg3.g), qPrintable(what + ": dgamma not bit-identical"));
            }
    }

    void geluTanhMatchesTheCpu() {
        if (!h) QSKIP("no CUDA device (cuda_device_count() == 0)");
        for (DType dt : kFloatTypes) {
            Pair x = h->rnd({70001}, dt, -6.0, 6.0);
            Pair y = h->zeros({70001}, dt);
            h->cpu->gelu_tanh_forward(x.c, y.c);
            h->gpu->gelu_tanh_forward(x.g, y.g);
            QVERIFY(h->same(y, tol_for(dt, 2e-6), "gelu forward " + dn(dt)));
            Pair dy = h->rnd({70001}, dt), dx = h->zeros({70001}, dt);
            h->cpu->gelu_tanh_backward(x.c, dy.c, dx.c);
            h->gpu->gelu_tanh_backward(x.g, dy.g, dx.g);
            QVERIFY(h->same(dx, tol_for(dt, 2e-6), "gelu backward " + dn(dt)));
        }
    }

    void attentionMatchesTheCpu() {
        if (!h) QSKIP("no CUDA device (cuda_device_count() == 0)");
        for (DType dt : kFloatTypes) {
            attention_case(dt, 2, 37, 48, 1, true, 0.0f);    // D 48 (two columns per lane), one head
            attention_case(dt, 1, 70, 64, 2, true, 0.0f);    // D 32, two heads
            attention_case(dt, 2, 33, 256, 2, true, 0.0f);   // D 128 (four per lane, the largest)
            attention_case(dt, 1, 129, 96, 1, false, 0.0f);  // D 96, not causal
            attention_case(dt, 3, 1, 64, 4, true, 0.0f);     // one token
        }
        attention_case(DType::f32, 2, 45, 64, 2, true, 0.1f);  // dropout on the probabilities
        attention_case(DType::bf16, 1, 50, 64, 1, false, 0.2f);
        attention_case(DType::f32, 1, 300, 128, 2, true, 0.0f);  // many key tiles
    }

    void attentionRefusesLargeHeads() {
        if (!h) QSKIP("no CUDA device (cuda_device_count() == 0)");
        Pair qkv = h->rnd({1, 4, 3 * 256}, DType::f32);
        Pair out = h->zeros({1, 4, 256}, DType::f32), lse = h->zeros({1, 1, 4}, DType::f32);
        Tensor wg = h->bytes_gpu(h->gpu->attention_workspace_bytes(1, 4, 256, 1, DType::f32));
        AttentionParams p;
        p.heads = 1;
        try {
            h->gpu->attention_forward(qkv.g, out.g, lse.g, p, wg);
            QFAIL("expected an error for head size 256");
        } catch (const Error& e) {
            QVERIFY2(std::string(e.what()).find("--device cpu") != std::string::npos, e.what());
        }
    }

    void crossEntropyMatchesTheCpu() {
        if (!h) QSKIP("no CUDA device (cuda_device_count() == 0)");
        struct Case {
            std::int64_t N, V;
        };
        for (const Case k : {Case{13, 1000}, Case{4, 50304}})
            for (DType dt : kFloatTypes) {
                const QString what = QString("cross_entropy_inplace %1 N%2 V%3").arg(dn(dt)).arg(k.N).arg(k.V);
                Pair z = h->rnd({k.N, k.V}, dt, -5.0, 5.0);
                Pair y = h->ids({k.N}, k.V);
                // without the gradient: the logits stay as they were
                const auto before = h->raw_gpu(z.g);
                const LossResult g0 = h->gpu->cross_entropy_inplace(z.g, y.g, false, 1.0f);
                QVERIFY2(h->raw_gpu(z.g) == before, qPrintable(what + ": logits changed without want_grad"));
                const LossResult c = h->cpu->cross_entropy_inplace(z.c, y.c, true, 0.5f);
                const LossResult g = h->gpu->cross_entropy_inplace(z.g, y.g, true, 0.5f);
                QVERIFY2(std::abs(g.loss - c.loss) <= (dt == DType::f32 ? 1e-5 : 1e-3) * std::abs(c.loss),
                         qPrintable(QString("%1: loss gpu %2 cpu %3").arg(what).arg(g.loss, 0, 'g', 10).arg(c.loss, 0, 'g', 10)));
                QCOMPARE(g0.loss, g.loss);
                QCOMPARE(g.correct, c.correct);
                QVERIFY(h->same(z, tol_for(dt, 1e-5), what + " gradient"));
            }
        // a target outside the vocabulary: an error, the logits untouched
        Pair z = h->rnd({3, 10}, DType::f32);
        Pair y = h->make({3}, DType::i64, {1.0, 10.0, 2.0});
        const auto before = h->raw_gpu(z.g);
        QVERIFY_THROWS_EXCEPTION(Error, h->gpu->cross_entropy_inplace(z.g, y.g, true, 1.0f));
        QVERIFY(h->raw_gpu(z.g) == before);
        // ignored targets (-100, kIgnoreTarget; instruction data's prompt): no loss, a zero gradient row, on
        // both backends alike (tests/unit/test_instruct_data.cpp checks the CPU against PyTorch)
        for (DType dt : kFloatTypes) {
            Pair zi = h->rnd({6, 300}, dt, -5.0, 5.0);
            Pair yi = h->make({6}, DType::i64, {-100.0, 7.0, -100.0, 299.0, 0.0, -100.0});
            const LossResult c = h->cpu->cross_entropy_inplace(zi.c, yi.c, true, 0.5f);
            const LossResult g = h->gpu->cross_entropy_inplace(zi.g, yi.g, true, 0.5f);
            QVERIFY2(std::abs(g.loss - c.loss) <= (dt == DType::f32 ? 1e-5 : 1e-3) * std::abs(c.loss),
                     qPrintable(QString("ignored targets %1: loss gpu %2 cpu %3").arg(dn(dt)).arg(g.loss).arg(c.loss)));
            QCOMPARE(g.correct, c.correct);
            QVERIFY(h->same(zi, tol_for(dt, 1e-5), QStringLiteral("ignored targets gradient")));
        }
    }

    void rowCopiesAndTransposes() {
        if (!h) QSKIP("no CUDA device (cuda_device_count() == 0)");
        for (DType dt : kFloatTypes) {
            Pair src = h->rnd({1, 5, 24}, dt), dst = h->rnd({3, 9, 24}, dt);  // broadcast source
            h->cpu->copy_rows(src.c, 1, dst.c, 2, 4);
            h->gpu->copy_rows(src.g, 1, dst.g, 2, 4);
            QVERIFY(h->same(dst, 0.0, "copy_rows broadcast " + dn(dt)));
            Pair src2 = h->rnd({3, 7, 24}, dt);
            h->cpu->copy_rows(src2.c, 0, dst.c, 0, 7);
            h->gpu->copy_rows(src2.g, 0, dst.g, 0, 7);
            QVERIFY(h->same(dst, 0.0, "copy_rows " + dn(dt)));
            Pair x = h->rnd({3, 17, 49}, dt), y = h->zeros({3, 49, 17}, dt);
            h->cpu->transpose_last2(x.c, y.c);
            h->gpu->transpose_last2(x.g, y.g);
            QVERIFY(h->same(y, 0.0, "transpose_last2 " + dn(dt)));
        }
    }

    void smallGptTrainsLikeTheCpu() {
        if (!h) QSKIP("no CUDA device (cuda_device_count() == 0)");
        Trainer cpu(lm_config("cpu"));
        const TrainResult c = cpu.run();
        QCOMPARE(QString::fromStdString(c.status), QString("finished"));
        Trainer gpu(lm_config("cuda:0"));
        const TrainResult g = gpu.run();
        QCOMPARE(QString::fromStdString(g.status), QString("finished"));
        qInfo("small GPT, 8 steps: train loss GPU %.6f CPU %.6f, validation GPU %.6f CPU %.6f; %.0f tokens/s on the GPU",
              g.train_loss, c.train_loss, g.test_loss, c.test_loss, g.tokens_per_second);
        QVERIFY(std::isfinite(g.train_loss) && std::isfinite(g.test_loss));
        QVERIFY2(std::abs(g.train_loss - c.train_loss) <= 1e-3 * c.train_loss,
                 qPrintable(QString("train loss GPU %1 vs CPU %2").arg(g.train_loss).arg(c.train_loss)));
        QVERIFY2(std::abs(g.test_loss - c.test_loss) <= 2e-3 * c.test_loss,
                 qPrintable(QString("validation loss GPU %1 vs CPU %2").arg(g.test_loss).arg(c.test_loss)));
        // deterministic: a second GPU run gives the same losses to the bit
        Trainer gpu2(lm_config("cuda:0"));
        const TrainResult g2 = gpu2.run();
        QCOMPARE(g2.train_loss, g.train_loss);
        QCOMPARE(g2.test_loss, g.test_loss);
        // the planner's GPU prediction is the ledger's, category by category (attention workspace included)
        const MemoryPlan p = predict_memory(plan_request(lm_config("cuda:0"), g.train_samples, g.test_samples));
        for (MemCategory cat : {MemCategory::parameters, MemCategory::gradients, MemCategory::activations,
                                MemCategory::optimizer_state, MemCategory::workspace})
            QVERIFY2(at(p.device, cat) == at(g.ledger.peak, cat),
                     qPrintable(QString("%1: predicted %2, measured %3")
                                    .arg(category_name(cat))
                                    .arg(at(p.device, cat))
                                    .arg(at(g.ledger.peak, cat))));
        // bf16 trains too, near the f32 losses
        Trainer gb(lm_config("cuda:0", "bf16"));
        const TrainResult b = gb.run();
        QCOMPARE(QString::fromStdString(b.status), QString("finished"));
        QVERIFY2(std::abs(b.train_loss - c.train_loss) <= 0.05 * c.train_loss,
                 qPrintable(QString("bf16 train loss GPU %1 vs f32 CPU %2").arg(b.train_loss).arg(c.train_loss)));
    }
};

QTEST_APPLESS_MAIN(CudaTransformerTest)
#include "test_cuda_transformer.moc"
