// What a model needs of a backend is asked at setup (nn/backend_ops.h, Backend::supports): a backend that
// lacks an op a model runs is refused when the training state is built, with one message naming the op,
// the dtype and the layer, and nothing of the model is allocated. The table covers every layer of the
// catalog; the CPU backend runs every op family in every float dtype (the GPU's claim: tests/cuda/
// test_cuda_supports.cpp).
#include <QtTest>
#include <QTemporaryDir>

#include <algorithm>
#include <cmath>
#include <random>
#include <set>

#include "backend/cpu/cpu_backend.h"
#include "base/error.h"
#include "nn/backend_ops.h"
#include "nn/compression.h"
#include "nn/model_spec.h"
#include "optim/optimizer.h"
#include "strategy/training_state.h"

using namespace hr;

namespace {

// The CPU backend, except for one op family it says it lacks (as a backend without, say, a fused
// attention kernel would): every op it is asked for is recorded.
class Without : public CpuBackend {
public:
    Without(std::string op, std::shared_ptr<MemoryLedger> ledger) : CpuBackend(1, std::move(ledger)), op_(std::move(op)) {}
    bool supports(const std::string& op, DType dtype) const override {
        asked.insert(op);
        return op != op_ && CpuBackend::supports(op, dtype);
    }
    std::string name() const override { return "test backend without " + op_; }
    mutable std::set<std::string> asked;

private:
    std::string op_;
};

OptimizerConfig adamw() {
    OptimizerConfig o;
    o.kind = "adamw";
    return o;
}

}  // namespace

class BackendOpsTest : public QObject {
    Q_OBJECT

private slots:
    // QLoRA's dequantisation (Backend::dequantize over tensor/quantized_format.h), against the quantiser's
    // definition computed here: s = absmax / qmax of each row (int8) or group (int4, the row's tail a shorter
    // group), q = round half to even of w / s clamped to +-qmax, value q x s in f32, then the output dtype.
    void dequantizeMatchesItsDefinition_data() {
        QTest::addColumn<int>("bits");
        QTest::addColumn<qint64>("rows");
        QTest::addColumn<qint64>("cols");
        QTest::addColumn<qint64>("group");
        QTest::newRow("int8 4x9") << 8 << qint64(4) << qint64(9) << qint64(64);
        QTest::newRow("int8 3x130") << 8 << qint64(3) << qint64(130) << qint64(64);
        QTest::newRow("int4 5x7 group 3") << 4 << qint64(5) << qint64(7) << qint64(3);
        QTest::newRow("int4 3x130 group 64") << 4 << qint64(3) << qint64(130) << qint64(64);
        QTest::newRow("int4 1x1") << 4 << qint64(1) << qint64(1) << qint64(64);
    }
    void dequantizeMatchesItsDefinition() {
        QFETCH(int, bits);
        QFETCH(qint64, rows);
        QFETCH(qint64, cols);
        QFETCH(qint64, group);
        std::mt19937 gen(7);
        std::normal_distribution<float> nd(0.0f, 0.05f);
        std::vector<float> w(static_cast<std::size_t>(rows * cols));
        for (float& v : w) v = nd(gen);
        std::fill(w.begin(), w.begin() + cols, 0.0f);  // a zero row: scale 0
        if (cols > 2) w[static_cast<std::size_t>(cols + 1)] = 3.0f;  // an outlier: its group's scale
        const float qmax = bits == 8 ? 127.0f : 7.0f;
        const qint64 g = bits == 8 ? cols : group;
        std::vector<float> want(w.size());
        for (qint64 r = 0; r < rows; ++r)
            for (qint64 c0 = 0; c0 < cols; c0 += g) {
                const qint64 c1 = std::min(cols, c0 + g);
                float amax = 0;
                for (qint64 c = c0; c < c1; ++c) amax = std::max(amax, std::fabs(w[r * cols + c]));
                const float sc = amax / qmax;
                for (qint64 c = c0; c < c1; ++c)
                    want[r * cols + c] = sc == 0 ? 0.0f : std::clamp(std::nearbyint(w[r * cols + c] / sc), -qmax, qmax) * sc;
            }
        auto ledger = std::make_shared<MemoryLedger>();
        CpuBackend be(2, ledger);
        std::vector<std::uint8_t> packed(quantized_bytes(rows, cols, bits, group));
        QCOMPARE(packed.size(), static_cast<std::size_t>(4 * rows * ((cols + g - 1) / g) + (rows * cols * bits + 7) / 8));
        quantize_pack(w.data(), rows, cols, bits, group, packed.data());
        Tensor p = Tensor::empty(be.allocator(), {static_cast<std::int64_t>(packed.size())}, DType::u8, MemCategory::other);
        be.copy_from_host(packed.data(), p);
        for (DType dt : {DType::f32, DType::f64, DType::bf16}) {
            Tensor out = Tensor::empty(be.allocator(), {rows, cols}, dt, MemCategory::other);
            be.dequantize(p, bits, group, out);
            std::vector<double> got(w.size());
            if (dt == DType::f32) {
                std::vector<float> f(w.size());
                be.copy_to_host(out, f.data());
                std::copy(f.begin(), f.end(), got.begin());
            } else if (dt == DType::f64) {
                be.copy_to_host(out, got.data());
            } else {
                std::vector<std::uint16_t> h(w.size());
                be.copy_to_host(out, h.data());
                for (std::size_t k = 0; k < h.size(); ++k) got[k] = bf16_to_f32(h[k]);
            }
            for (std::size_t k = 0; k < w.size(); ++k) {
                const double e = dt == DType::bf16 ? bf16_to_f32(f32_to_bf16(want[k])) : want[k];
                QVERIFY2(got[k] == e, qPrintable(QString("%1 at %2: %3 vs %4").arg(dtype_name(dt)).arg(k).arg(got[k]).arg(e)));
            }
        }
        // the host round trip (the what-if's quantize_rows) gives the same values
        std::vector<float> rt = w;
        quantize_rows(rt.data(), rows, cols, bits, group);
        for (std::size_t k = 0; k < w.size(); ++k) QCOMPARE(rt[k], want[k]);
        // a packed tensor too small for w is refused, naming the op
        Tensor small = p.view(0, {static_cast<std::int64_t>(packed.size()) - 1});
        Tensor out = Tensor::empty(be.allocator(), {rows, cols}, DType::f32, MemCategory::other);
        QVERIFY_THROWS_EXCEPTION(Error, be.dequantize(small, bits, group, out));
    }

    // NF4 with double-quantised scales (--quantize-base nf4, --quantize nf4; tensor/quantized_format.h)
    // against PyTorch: the 16 levels built as bitsandbytes' create_normal_map builds them (the quantiles of
    // N(0, 1) at 8 points from 0.9677083 to 0.5 and at 7 for the negatives, with 0, over the largest), and a
    // 70 x 260 matrix (350 scales: two blocks of steps; a zero group, an outlier) quantised by the format's
    // definition in torch: every dequantised value equal, bit for bit. Then what NF4 is for: on normal weights
    // its error is below int4's at fewer bytes, 4.127 bits a value (QLoRA's figure) at group 64.
    void nf4AsQLoRADefinesIt() {
        if (!QFileInfo::exists(QStringLiteral("/usr/bin/python3"))) QSKIP("no /usr/bin/python3 for the reference");
        const std::int64_t rows = 70, cols = 260, group = 64;
        std::mt19937 gen(11);
        std::normal_distribution<float> nd(0.0f, 0.02f);
        std::vector<float> w(static_cast<std::size_t>(rows * cols));
        for (float& v : w) v = nd(gen);
        std::fill(w.begin() + cols, w.begin() + cols + group, 0.0f);  // a zero group: scale 0
        w[5] = 0.9f;                                                   // an outlier: its group's scale
        QTemporaryDir dir;
        const QString input = dir.filePath(QStringLiteral("w.f32"));
        {
            QFile f(input);
            QVERIFY(f.open(QIODevice::WriteOnly));
            f.write(reinterpret_cast<const char*>(w.data()), static_cast<qint64>(w.size() * 4));
        }
        const char* script = R"(
import math, sys, torch
rows, cols, g = int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4])
normal = torch.distributions.Normal(torch.tensor(0.0, dtype=torch.float64), torch.tensor(1.0, dtype=torch.float64))
offset = 0.9677083
pos = normal.icdf(torch.linspace(offset, 0.5, 9)[:-1].double()).tolist()
neg = (-normal.icdf(torch.linspace(offset, 0.5, 8)[:-1].double())).tolist()
levels = torch.tensor(sorted(pos + [0.0] + neg), dtype=torch.float32)
levels = levels / levels.max()
w = torch.frombuffer(bytearray(open(sys.argv[1], 'rb').read()), dtype=torch.float32).reshape(rows, cols)
groups = [(r, c0, min(cols, c0 + g)) for r in range(rows) for c0 in range(0, cols, g)]
absmax = torch.stack([w[r, a:b].abs().max() for r, a, b in groups])
c = torch.tensor(math.fsum(absmax.double().tolist()) / len(groups), dtype=torch.float32)
scale = torch.empty_like(absmax)
for b0 in range(0, len(groups), 256):
    d = absmax[b0:b0 + 256] - c
    t = d.abs().max() / torch.tensor(127.0)
    e = torch.zeros_like(d) if t == 0 else torch.clamp(torch.round(d / t), -127, 127)
    scale[b0:b0 + 256] = (e.double() * t.double() + c.double()).float()
out = torch.empty_like(w)
for i, (r, a, b) in enumerate(groups):
    x = w[r, a:b] / absmax[i] if absmax[i] > 0 else torch.zeros(b - a)
    k = (x[:, None] - levels[None, :]).abs().argmin(dim=1)
    out[r, a:b] = levels[k] * scale[i]
print(' '.join(repr(float(v)) for v in levels))
sys.stdout.write(out.numpy().tobytes().hex())
)";
        QProcess py;
        py.start(QStringLiteral("/usr/bin/python3"), {QStringLiteral("-c"), QString::fromUtf8(script), input,
                                                      QString::number(rows), QString::number(cols), QString::number(group)});
        QVERIFY(py.waitForFinished(120000));
        if (py.exitCode() != 0 && py.readAllStandardError().contains("No module named 'torch'"))
            QSKIP("no PyTorch (python3-torch) for the reference");
        QCOMPARE(py.exitCode(), 0);
        const QList<QByteArray> lines = py.readAllStandardOutput().split('\n');
        QCOMPARE(lines.size(), 2);
        const QList<QByteArray> levels = lines[0].split(' ');
        QCOMPARE(levels.size(), 16);
        for (int k = 0; k < 16; ++k)
            QVERIFY2(std::fabs(levels[k].toDouble() - double(nf4_level(k))) <= 1e-7,
                     qPrintable(QString("level %1: %2 vs %3").arg(k).arg(levels[k].toDouble(), 0, 'g', 9).arg(nf4_level(k), 0, 'g', 9)));
        const QByteArray want = QByteArray::fromHex(lines[1]);
        QCOMPARE(want.size(), qsizetype(w.size() * 4));
        std::vector<std::uint8_t> packed(quantized_bytes(rows, cols, kQuantNf4, group));
        QCOMPARE(packed.size(), std::size_t(4 + 4 * 2 + 350 + rows * cols / 2));
        quantize_pack(w.data(), rows, cols, kQuantNf4, group, packed.data());
        auto ledger = std::make_shared<MemoryLedger>();
        CpuBackend be(2, ledger);
        Tensor p = Tensor::empty(be.allocator(), {static_cast<std::int64_t>(packed.size())}, DType::u8, MemCategory::other);
        be.copy_from_host(packed.data(), p);
        Tensor out = Tensor::empty(be.allocator(), {rows, cols}, DType::f32, MemCategory::other);
        be.dequantize(p, kQuantNf4, group, out);
        std::vector<float> got(w.size());
        be.copy_to_host(out, got.data());
        int differ = 0;
        for (std::size_t k = 0; k < w.size(); ++k) {
            float ref;
            std::memcpy(&ref, want.constData() + 4 * k, 4);
            if (got[k] != ref && differ++ < 5) qWarning("value %zu: %.9g vs PyTorch's %.9g", k, got[k], ref);
        }
        QCOMPARE(differ, 0);
        // the host's round trip (the what-if) is the same quantiser
        std::vector<float> rt = w;
        QCOMPARE(quantize_rows(rt.data(), rows, cols, kQuantNf4, group), std::int64_t(350));
        QVERIFY(rt == got);
        // on normal weights NF4 loses less than int4 and takes fewer bytes
        std::vector<float> normal(256 * 256);
        for (float& v : normal) v = nd(gen);
        std::vector<float> as_nf4 = normal, as_int4 = normal;
        quantize_rows(as_nf4.data(), 256, 256, kQuantNf4, 64);
        quantize_rows(as_int4.data(), 256, 256, 4, 64);
        double e_nf4 = 0, e_int4 = 0;
        for (std::size_t k = 0; k < normal.size(); ++k) {
            e_nf4 += double(as_nf4[k] - normal[k]) * double(as_nf4[k] - normal[k]);
            e_int4 += double(as_int4[k] - normal[k]) * double(as_int4[k] - normal[k]);
        }
        qInfo("normal weights, group 64: squared error nf4 %.4g, int4 %.4g (%.2fx)", e_nf4, e_int4, e_int4 / e_nf4);
        QVERIFY(e_nf4 < e_int4);
        const double bits_nf4 = 8.0 * double(quantized_bytes(4096, 4096, kQuantNf4, 64)) / (4096.0 * 4096.0);
        const double bits_int4 = 8.0 * double(quantized_bytes(4096, 4096, 4, 64)) / (4096.0 * 4096.0);
        qInfo("bits a value at group 64: nf4 %.4f, int4 %.4f", bits_nf4, bits_int4);
        QVERIFY(std::fabs(bits_nf4 - 4.127) < 0.001 && bits_int4 == 4.5);
    }

    void everyCatalogLayerHasItsOps() {
        const std::set<std::string> known(backend_op_names().begin(), backend_op_names().end());
        for (const LayerTypeInfo& t : layer_catalog()) {
            if (t.group == "loss") continue;  // the loss is a need of its own (training_backend_needs)
            const std::vector<std::string> ops = layer_backend_ops(t.type);
            for (const std::string& op : ops) QVERIFY2(known.count(op), (t.type + ": " + op).c_str());
            if (t.type != "flatten") QVERIFY2(!ops.empty(), t.type.c_str());
        }
        QVERIFY_THROWS_EXCEPTION(InputError, layer_backend_ops("warp_drive"));
    }

    void cpuRunsEveryOpInEveryFloatDtype() {
        auto be = make_cpu_backend(1, std::make_shared<MemoryLedger>());
        for (const std::string& op : backend_op_names())
            for (DType dt : {DType::f32, DType::bf16, DType::f16, DType::f64}) QVERIFY2(be->supports(op, dt), op.c_str());
    }

    void missingOpFailsAtSetupNamingIt_data() {
        QTest::addColumn<QString>("preset");
        QTest::addColumn<QString>("op");
        QTest::addColumn<QString>("where");
        QTest::newRow("seed-cnn without conv2d") << "seed-cnn" << "conv2d" << "layer 0 (conv2d)";
        QTest::newRow("resnet-mini without batchnorm") << "resnet-mini" << "batchnorm" << "(batchnorm2d)";
        QTest::newRow("gpt-tiny without attention") << "gpt-tiny" << "attention" << "(transformer_block)";
        QTest::newRow("mlp without adam_update") << "mlp" << "adam_update" << "the optimizer (adamw)";
        QTest::newRow("gpt-tiny without cross_entropy") << "gpt-tiny" << "cross_entropy" << "the loss";
    }
    void missingOpFailsAtSetupNamingIt() {
        QFETCH(QString, preset);
        QFETCH(QString, op);
        QFETCH(QString, where);
        const ModelSpec spec = preset.startsWith(QLatin1String("gpt")) ? preset_model(preset.toStdString(), {64}, 256)
                                                                       : preset_model(preset.toStdString());
        auto ledger = std::make_shared<MemoryLedger>();
        Without be(op.toStdString(), ledger);
        auto host = make_cpu_backend(1, std::make_shared<MemoryLedger>());
        StrategyConfig sc;
        try {
            TrainingState st(spec, adamw(), resolve_strategy(sc, spec, 4), 1, be, be.allocator(), *host, host->allocator());
            QFAIL("the training state was built on a backend without the op");
        } catch (const InputError& e) {
            const std::string m = e.what();
            QVERIFY2(e.message().id.rfind("backend.", 0) == 0, e.message().id.c_str());
            QVERIFY2(m.find(op.toStdString()) != std::string::npos, m.c_str());
            QVERIFY2(m.find(where.toStdString()) != std::string::npos, m.c_str());
            QVERIFY2(m.find("test backend without") != std::string::npos, m.c_str());
            QVERIFY2(m.find("f32") != std::string::npos, m.c_str());
        }
        QCOMPARE(ledger->live_total(), std::size_t(0));  // nothing of the model was allocated
        QVERIFY(be.asked.count(op.toStdString()));
    }

    void offloadedOptimizerIsAskedOfTheHost() {
        const ModelSpec spec = preset_model("mlp");
        StrategyConfig sc;
        sc.offload_optimizer = true;
        const std::vector<BackendNeed> needs = training_backend_needs(spec, adamw(), DType::bf16, true, true);
        QCOMPARE(needs.back().op, std::string("adam_update"));
        QVERIFY(needs.back().host);
        QCOMPARE(needs.back().dtype, DType::f32);  // the master weights it updates
        QCOMPARE(needs.front().dtype, DType::bf16);
        auto ledger = std::make_shared<MemoryLedger>();
        Without host("adam_update", ledger);
        auto device = make_cpu_backend(1, std::make_shared<MemoryLedger>());
        QVERIFY_THROWS_EXCEPTION(InputError, check_backend_needs(needs, *device, host));
        check_backend_needs(needs, host, *device);  // the device lacking it is fine: the host updates
    }
};

QTEST_GUILESS_MAIN(BackendOpsTest)
#include "test_backend_ops.moc"
