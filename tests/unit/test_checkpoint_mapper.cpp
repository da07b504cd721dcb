// The checkpoint mapper (core/strategy/checkpoint_mapper.h): for every layout RankLayout admits on 1-4 ranks
// (layout_choices and K x T), the ranks' placements together cover every tensor of the whole model exactly
// once, and every element of its flat state exactly once. The reference is independent of the mapper: a
// one-process Model of the whole spec built for real on the CPU, its state_dict's names, dtypes and shapes in
// order, and each trainable tensor's place in its flat parameter buffer read from the tensor's own address.
#include <QtTest>

#include <map>
#include <set>

#include "backend/cpu/cpu_backend.h"
#include "base/error.h"
#include "memory/counting_allocator.h"
#include "memory/ledger.h"
#include "nn/model.h"
#include "nn/model_spec.h"
#include "nn/transformer_spec.h"
#include "strategy/rank_layout.h"
#include "strategy/training_state.h"

using namespace hr;

namespace {

constexpr std::int64_t kBatch = 24;

struct RefTensor {
    std::string name;
    DType dtype;
    Shape shape;
    std::int64_t offset = -1;  // trainable, untied: its first element in one process's flat parameters
};
struct Reference {
    std::vector<RefTensor> tensors;
    std::int64_t flat_numel = 0;
};

Reference reference_of(const ModelSpec& spec, const ResolvedStrategy& s, Backend& cpu) {
    ModelOptions mo;
    mo.batch = 1;
    mo.seed = 7;
    mo.dtype = s.compute_dtype;
    mo.lora_rank = s.lora_rank;
    mo.lora_alpha = s.lora_alpha;
    mo.lora_targets = s.lora_targets;
    mo.lora_base_bits = s.lora_base_bits;
    Model whole(spec, cpu, mo);
    Reference ref;
    const auto* base = static_cast<const std::uint8_t*>(whole.parameters().raw());
    ref.flat_numel = whole.parameters().numel();
    for (const NamedTensor& t : whole.state_dict()) {
        RefTensor r{t.name, t.tensor.dtype(), t.tensor.shape()};
        if (t.trainable && !t.tied)
            r.offset = (static_cast<const std::uint8_t*>(t.tensor.raw()) - base) /
                       static_cast<std::ptrdiff_t>(dtype_size(t.tensor.dtype()));
        ref.tensors.push_back(r);
    }
    return ref;
}

ModelSpec model_named(const std::string& name) {
    if (name == "mlp") return preset_model("mlp");
    ModelSpec s = preset_model("gpt-tiny");
    apply_sequence_length(s, 16);
    if (name == "gpt-tiny untied") s.layers.back().attrs["tied"] = false;
    return s;
}

// A rank's mapper, of a dry-run training state (the planner's way: nothing allocated, no communicator)
struct RankMap {
    ResolvedStrategy s;
    std::vector<TensorPlace> places;
    std::vector<FlatStretch> stretches;
    std::int64_t canonical_numel = 0;
    bool trivial = false;
};

// Who writes a place's or a stretch's elements to the checkpoint: its owner, rank 0 for what every rank
// holds, and for a split head's rows the first replica of each part of the last stage.
bool writes(const Holding& held, const ResolvedStrategy& s) {
    if (held.rows) return s.data_rank() == 0 && (s.pipeline == 1 || s.stage() == s.pipeline - 1);
    return held.owner < 0 ? s.rank == 0 : held.owner == s.rank;
}

}  // namespace

class CheckpointMapperTest : public QObject {
    Q_OBJECT
    std::unique_ptr<Backend> m_cpu = make_cpu_backend(1, std::make_shared<MemoryLedger>());

    // Builds every rank's map of `sc` on `world` ranks; false when the layout or the model refuses it.
    bool build(const ModelSpec& spec, StrategyConfig sc, int world, std::vector<RankMap>& out) {
        out.clear();
        try {
            rank_layout(sc, world);
            for (int r = 0; r < world; ++r) {
                const ResolvedStrategy rs = resolve_strategy(sc, spec, kBatch, world, r);
                CountingAllocator dev(Device::cpu()), host(Device::cpu());
                OptimizerConfig o;
                o.kind = "adamw";
                TrainingState st(spec, o, rs, 7, *m_cpu, dev, *m_cpu, host, true);
                const CheckpointMapper& m = st.checkpoint_mapper();
                out.push_back({rs, m.places(), m.stretches(), m.canonical_numel(), m.trivial()});
            }
        } catch (const InputError&) {
            return false;
        }
        return true;
    }

    // The ranks' maps against the reference: every place the whole model's entry, in order; every tensor
    // written once (rows: the parts tile it); every element of the flat state written once.
    void check_cover(const std::vector<RankMap>& ranks, const Reference& ref, const QString& what) {
        const QByteArray w = what.toUtf8();
        for (const RankMap& rm : ranks) {
            QVERIFY2(rm.places.size() == ref.tensors.size(), w.constData());
            QVERIFY2(rm.canonical_numel == ref.flat_numel, w.constData());
            QVERIFY2(rm.trivial == (rm.s.pipeline == 1 && rm.s.tp_head == 1), w.constData());
            for (std::size_t i = 0; i < ref.tensors.size(); ++i) {
                const TensorPlace& p = rm.places[i];
                const QByteArray n = w + " " + QByteArray::fromStdString(p.name);
                QVERIFY2(p.name == ref.tensors[i].name, n.constData());
                QVERIFY2(p.dtype == ref.tensors[i].dtype, n.constData());
                QVERIFY2(p.full_shape == ref.tensors[i].shape, n.constData());
                // every rank agrees on who holds it
                QVERIFY2(p.held.owner == ranks[0].places[i].held.owner, n.constData());
                QVERIFY2(p.held.rows == ranks[0].places[i].held.rows, n.constData());
            }
        }
        // each tensor's elements, written by whom
        for (std::size_t i = 0; i < ref.tensors.size(); ++i) {
            const std::int64_t whole = shape_numel(ref.tensors[i].shape);
            std::int64_t written = 0;
            int writers = 0;
            for (const RankMap& rm : ranks) {
                const TensorPlace& p = rm.places[i];
                if (!writes(p.held, rm.s)) continue;
                QVERIFY2(p.local >= 0, (w + " writer lacks " + QByteArray::fromStdString(p.name)).constData());
                written += p.numel;
                ++writers;
            }
            const bool rows = ranks[0].places[i].held.rows;
            const QByteArray n = w + " " + QByteArray::fromStdString(ref.tensors[i].name);
            QVERIFY2(written == whole, n.constData());
            QVERIFY2(writers == (rows ? ranks[0].s.tp_head : 1), n.constData());
        }
        // the flat state: every element of every trainable tensor once, nothing twice
        std::vector<int> cover(static_cast<std::size_t>(ref.flat_numel), 0);
        for (const RankMap& rm : ranks)
            for (const FlatStretch& st : rm.stretches) {
                if (!st.written || st.run_offset < 0 || !writes(st.held, rm.s)) continue;
                for (std::int64_t k = 0; k < st.numel; ++k) {
                    const std::int64_t at = st.canonical_offset + st.here_offset + k;
                    QVERIFY2(at >= 0 && at < ref.flat_numel, w.constData());
                    ++cover[static_cast<std::size_t>(at)];
                }
            }
        for (int c : cover) QVERIFY2(c <= 1, (w + " an element written twice").constData());
        for (const RefTensor& t : ref.tensors) {
            if (t.offset < 0) continue;
            for (std::int64_t k = 0; k < shape_numel(t.shape); ++k)
                QVERIFY2(cover[static_cast<std::size_t>(t.offset + k)] == 1,
                         (w + " " + QByteArray::fromStdString(t.name) + " not written once").constData());
        }
    }

private slots:
    void everyLayoutCoversTheWholeModelOnce_data() {
        QTest::addColumn<QString>("model");
        QTest::addColumn<int>("lora");
        QTest::newRow("mlp") << "mlp" << 0;
        QTest::newRow("gpt-tiny (tied head)") << "gpt-tiny" << 0;
        QTest::newRow("gpt-tiny untied") << "gpt-tiny untied" << 0;
        QTest::newRow("gpt-tiny untied + LoRA") << "gpt-tiny untied" << 2;
    }
    void everyLayoutCoversTheWholeModelOnce() {
        QFETCH(QString, model);
        QFETCH(int, lora);
        const ModelSpec spec = model_named(model.toStdString());
        int built = 0, spread = 0;
        std::set<std::string> kinds;
        for (int world = 1; world <= 4; ++world) {
            std::vector<StrategyConfig> configs;
            for (const std::string& choice : layout_choices()) {
                StrategyConfig sc;
                sc.accumulate = 4;
                sc.lora_rank = lora;
                try {
                    apply_layout_choice(sc, choice, world);
                } catch (const InputError&) {
                    continue;
                }
                configs.push_back(sc);
            }
            if (world == 4) {  // K x T: 2 stages, the last one's head over 2 ranks
                StrategyConfig sc;
                sc.accumulate = 4;
                sc.lora_rank = lora;
                sc.pipeline = 2;
                sc.tp_head = 2;
                configs.push_back(sc);
            }
            for (const StrategyConfig& sc : configs) {
                std::vector<RankMap> ranks;
                if (!build(spec, sc, world, ranks)) continue;
                const QString what = QStringLiteral("%1 on %2 ranks: %3")
                                         .arg(model)
                                         .arg(world)
                                         .arg(QString::fromStdString(describe_rank_layout(resolved_layout(ranks[0].s))));
                const Reference ref = reference_of(spec, ranks[0].s, *m_cpu);
                check_cover(ranks, ref, what);
                if (QTest::currentTestFailed()) return;
                ++built;
                if (!ranks[0].trivial) ++spread;
                kinds.insert(describe_rank_layout(resolved_layout(ranks[0].s)));
            }
        }
        // the layouts a model admits: one process and data parallel always; stages always; a split head but
        // on the tied head
        QVERIFY2(built >= 12, qPrintable(QString::number(built)));
        QVERIFY(spread >= (model == "gpt-tiny" ? 3 : 6));
    }
};

QTEST_GUILESS_MAIN(CheckpointMapperTest)
#include "test_checkpoint_mapper.moc"
