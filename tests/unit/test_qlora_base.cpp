// QLoRA as bitsandbytes and peft do it (BitsAndBytesConfig(load_in_4bit=True, bnb_4bit_quant_type="nf4",
// bnb_4bit_use_double_quant=True)): EVERY linear layer of the base is stored NF4 with double-quantised
// scales, whether or not it carries an adapter; embeddings, norms and the head stay in the compute dtype.
// Until this test, --quantize-base packed only the projections LoRA targeted (q_proj and v_proj for a
// LLaMA block by default), and llama-3.1-8b QLoRA planned 14 GiB of parameters where bitsandbytes keeps ~5.
//
// The parameter bytes of llama-tiny QLoRA are checked against an account written here from the model's
// sizes and the published layout (NF4: half a byte a value, one i8 scale a 64-value group of a row, one f32
// step a block of 256 scales, one f32 mean; every tensor on a 256-byte boundary), the planner against the
// ledger, a QLoRA run trains (its loss falls, only the adapters have gradients, the packed base is the same
// bytes after training), and llama-3.1-8b's planned parameters against the same account at full size.
#include <QtTest>

#include <cstring>
#include <random>

#include "backend/cpu/cpu_backend.h"
#include "nn/model.h"
#include "nn/transformer_spec.h"
#include "plan/planner.h"
#include "strategy/training_state.h"
#include "tensor/quantized_format.h"

using namespace hr;

namespace {

struct QloraSizes {
    std::int64_t V = 0, C = 0, H = 0, KV = 0, D = 0, F = 0, layers = 0;
    bool tied = false;
};

QloraSizes qlora_sizes_of(const ModelSpec& s) {
    QloraSizes z;
    for (const LayerSpec& l : s.layers) {
        if (l.type == "token_embedding") z.V = std::llround(layer_attr(l, "vocab_size"));
        if (l.type == "lm_head") z.tied = layer_attr(l, "tied") != 0;
        if (l.type != "llama_block") continue;
        ++z.layers;
        z.C = std::llround(layer_attr(l, "dim"));
        z.H = std::llround(layer_attr(l, "heads"));
        z.KV = std::llround(layer_attr(l, "kv_heads"));
        if (z.KV == 0) z.KV = z.H;
        z.D = std::llround(layer_attr(l, "head_dim"));
        if (z.D == 0) z.D = z.C / z.H;
        z.F = std::llround(layer_attr(l, "hidden"));
    }
    return z;
}

// NF4 bytes of a (rows, cols) matrix, written from the format's description, not the library's function:
// codes: half a byte a value; scales: one a 64-value group of a row (the row's tail a shorter group), each
// an i8; a f32 step per 256 scales; one f32 mean.
std::int64_t nf4_hand_bytes(std::int64_t rows, std::int64_t cols) {
    const std::int64_t values = rows * cols;
    const std::int64_t groups = rows * ((cols + 63) / 64);
    return (values + 1) / 2 + groups + 4 * ((groups + 255) / 256) + 4;
}

std::int64_t align256(std::int64_t b) { return (b + 255) / 256 * 256; }

// The frozen base of a QLoRA LLaMA model in `elt`-byte elements: its bytes (each tensor on a 256-byte
// boundary when `aligned`), in the model's order: embedding; per block input norm, q, k, v, o, post norm,
// gate, up, down; the final norm; the head (untied).
std::int64_t qlora_frozen_hand_bytes(const QloraSizes& z, std::int64_t elt, bool aligned) {
    std::int64_t total = 0;
    auto add = [&](std::int64_t bytes) {
        const std::int64_t rounded = (bytes + elt - 1) / elt * elt;  // packed bytes in whole elements
        total = aligned ? align256(total) + rounded : total + rounded;
    };
    add(z.V * z.C * elt);
    const std::int64_t q = z.H * z.D, kv = z.KV * z.D;
    for (std::int64_t i = 0; i < z.layers; ++i) {
        add(z.C * elt);
        add(nf4_hand_bytes(q, z.C));
        add(nf4_hand_bytes(kv, z.C));
        add(nf4_hand_bytes(kv, z.C));
        add(nf4_hand_bytes(z.C, q));
        add(z.C * elt);
        add(nf4_hand_bytes(z.F, z.C));
        add(nf4_hand_bytes(z.F, z.C));
        add(nf4_hand_bytes(z.C, z.F));
    }
    add(z.C * elt);
    if (!z.tied) add(z.V * z.C * elt);
    return total;
}

// The adapters of peft's default LLaMA targets (q_proj, v_proj) at rank r, in values; aligned: each of the
// four tensors a block on a 256-byte boundary and the buffer's end too
std::int64_t qlora_adapter_hand_bytes(const QloraSizes& z, std::int64_t r, std::int64_t elt, bool aligned) {
    std::int64_t total = 0;
    auto add = [&](std::int64_t values) { total = (aligned ? align256(total) : total) + values * elt; };
    for (std::int64_t i = 0; i < z.layers; ++i) {
        add(r * z.C);        // q_proj.lora_A
        add(z.H * z.D * r);  // q_proj.lora_B
        add(r * z.C);        // v_proj.lora_A
        add(z.KV * z.D * r); // v_proj.lora_B
    }
    return aligned ? align256(total) : total;
}

ModelSpec qlora_tiny() {
    ModelSpec s = preset_model("llama-tiny");
    apply_sequence_length(s, 16);
    return s;
}

}  // namespace

class QloraBaseTest : public QObject {
    Q_OBJECT

private slots:
    // A model alone: the ledger's parameter bytes are the frozen base and the adapters, each as accounted here
    void everyProjectionIsNf4InTheLedger_data() {
        QTest::addColumn<int>("dtype");
        QTest::newRow("f32") << int(DType::f32);
        QTest::newRow("bf16") << int(DType::bf16);
    }
    void everyProjectionIsNf4InTheLedger() {
        QFETCH(int, dtype);
        const ModelSpec spec = qlora_tiny();
        const QloraSizes z = qlora_sizes_of(spec);
        QCOMPARE(z.layers, std::int64_t(2));
        auto ledger = std::make_shared<MemoryLedger>();
        auto be = make_cpu_backend(2, ledger);
        ModelOptions o;
        o.batch = 2;
        o.dtype = static_cast<DType>(dtype);
        o.lora_rank = 4;
        o.lora_base_bits = kQuantNf4;
        o.lora_base_group = 64;
        Model m(spec, *be, o);
        const std::int64_t elt = static_cast<std::int64_t>(dtype_size(o.dtype));
        const std::int64_t frozen = qlora_frozen_hand_bytes(z, elt, true);
        const std::int64_t adapters = qlora_adapter_hand_bytes(z, 4, elt, true);
        QCOMPARE(std::int64_t(at(ledger->snapshot().live, MemCategory::parameters)), frozen + adapters);
        QCOMPARE(std::int64_t(at(ledger->snapshot().live, MemCategory::gradients)), adapters);  // adapters only
        // every projection's weight is packed NF4, nothing else is
        const std::int64_t proj_values = z.layers * (2 * z.H * z.D * z.C + 2 * z.KV * z.D * z.C + 3 * z.F * z.C);
        QCOMPARE(m.quantized_param_count(), proj_values);
        int packed = 0;
        for (const NamedTensor& t : m.state_dict()) {
            const bool proj = t.name.find("_proj.weight") != std::string::npos;
            QVERIFY2(proj == (t.quantized_bits == kQuantNf4), t.name.c_str());
            if (proj) {
                ++packed;
                QCOMPARE(std::int64_t(t.tensor.nbytes()), nf4_hand_bytes(t.quantized_shape[0], t.quantized_shape[1]));
            }
        }
        QCOMPARE(packed, int(7 * z.layers));
    }

    // The planner's parameters and gradients equal a training state's ledger, for llama-tiny QLoRA
    void plannerEqualsLedger() {
        const ModelSpec spec = qlora_tiny();
        StrategyConfig s;
        s.lora_rank = 4;
        s.quantize_base = "nf4";
        s.precision = "bf16";
        OptimizerConfig opt;
        opt.kind = "adamw";
        PlanRequest r;
        r.spec = spec;
        r.batch = 2;
        r.device = "cpu";
        r.threads = 2;
        r.strategy = s;
        r.optimizer = opt;
        const auto plan = predict_memory(r).device;
        auto ledger = std::make_shared<MemoryLedger>(), hl = std::make_shared<MemoryLedger>();
        auto be = make_cpu_backend(2, ledger), host = make_cpu_backend(2, hl);
        TrainingState st(spec, opt, resolve_strategy(s, spec, 2), 3, *be, be->allocator(), *host, host->allocator());
        const auto live = ledger->snapshot().live;
        for (MemCategory c : {MemCategory::parameters, MemCategory::gradients, MemCategory::optimizer_state,
                              MemCategory::workspace})
            QCOMPARE(at(plan, c), at(live, c));
        // the base in bf16 elements, the adapters in bf16 (and their f32 masters elsewhere)
        const QloraSizes z = qlora_sizes_of(spec);
        QVERIFY(at(plan, MemCategory::parameters) >= std::size_t(qlora_frozen_hand_bytes(z, 2, true)));
    }

    // A QLoRA run on llama-tiny trains: the loss over one fixed batch falls, only the adapters change, the
    // packed base is the same bytes after ten AdamW steps
    void qloraStepTrains() {
        const ModelSpec spec = qlora_tiny();
        StrategyConfig s;
        s.lora_rank = 8;
        s.lora_alpha = 16;
        s.quantize_base = "nf4";
        OptimizerConfig opt;
        opt.kind = "adamw";
        const std::int64_t B = 2;
        auto ledger = std::make_shared<MemoryLedger>(), hl = std::make_shared<MemoryLedger>();
        auto be = make_cpu_backend(2, ledger), host = make_cpu_backend(2, hl);
        TrainingState st(spec, opt, resolve_strategy(s, spec, B), 3, *be, be->allocator(), *host, host->allocator());
        Model& m = st.model();
        const std::int64_t T = spec.input_shape[0], V = spec.num_classes;
        std::mt19937_64 g(7);
        std::vector<std::int64_t> x(static_cast<std::size_t>(B * T)), y(x.size());
        for (std::size_t i = 0; i < x.size(); ++i) x[i] = static_cast<std::int64_t>(g() % static_cast<std::uint64_t>(V));
        for (std::size_t i = 0; i < x.size(); ++i) y[i] = x[(i + 1) % x.size()];
        auto base_bytes = [&] {
            std::vector<std::uint8_t> out;
            for (const NamedTensor& t : m.state_dict())
                if (t.quantized()) {
                    const auto* p = static_cast<const std::uint8_t*>(t.tensor.raw());
                    out.insert(out.end(), p, p + t.tensor.nbytes());
                }
            return out;
        };
        const std::vector<std::uint8_t> before = base_bytes();
        QVERIFY(!before.empty());
        std::vector<double> losses;
        for (int step = 0; step < 10; ++step) {
            m.zero_grad();
            Tensor xs = st.x_staging.slice0(0, B), ys = st.labels.slice0(0, B);
            be->copy_from_host(x.data(), xs);
            be->copy_from_host(y.data(), ys);
            Tensor logits = m.forward(xs, true, 0);
            Tensor lv = logits.reshape({B * T, V});
            losses.push_back(be->cross_entropy_inplace(lv, ys.reshape({B * T}), true, st.loss_scale()).loss);
            m.backward(logits);
            st.optimizer_step(0.01);
        }
        QVERIFY2(losses.back() < losses.front() - 0.1,
                 qPrintable(QStringLiteral("%1 -> %2").arg(losses.front()).arg(losses.back())));
        QVERIFY(base_bytes() == before);
        // gradients exist for the adapters alone (the flat buffer holds them, nothing else)
        const QloraSizes z = qlora_sizes_of(spec);
        QCOMPARE(m.gradients().numel() * std::int64_t(dtype_size(m.gradients().dtype())),
                 qlora_adapter_hand_bytes(z, 8, std::int64_t(dtype_size(m.gradients().dtype())), true));
    }

    // llama-3.1-8b QLoRA (the command): the planned parameters are the NF4 base of the account here,
    // the adapters and nothing else, about 5 GiB, where the whole base in bf16 would be 15
    void llama8bPlansTheQuantisedBase() {
        PlanRequest r;
        r.spec = preset_model("llama-3.1-8b");
        r.batch = 1;
        r.device = "cpu";
        r.threads = 2;
        r.strategy.lora_rank = 16;
        r.strategy.quantize_base = "nf4";
        r.strategy.precision = "bf16";
        r.strategy.checkpoint = "all";
        r.optimizer.kind = "adamw";
        const QloraSizes z = qlora_sizes_of(r.spec);
        QCOMPARE(z.layers, std::int64_t(32));
        const std::int64_t frozen = qlora_frozen_hand_bytes(z, 2, false);
        const std::int64_t adapters = qlora_adapter_hand_bytes(z, 16, 2, false);
        const auto params = std::int64_t(at(predict_memory(r).device, MemCategory::parameters));
        // alignment: at most 256 bytes a tensor (9 a block, 4 adapters a block, 3 others)
        QVERIFY2(params >= frozen + adapters && params <= frozen + adapters + 256 * (13 * z.layers + 4),
                 qPrintable(QStringLiteral("planned %1, account %2").arg(params).arg(frozen + adapters)));
        QVERIFY(params < std::int64_t(6) << 30);
    }
};

QTEST_GUILESS_MAIN(QloraBaseTest)
#include "test_qlora_base.moc"
