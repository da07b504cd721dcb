// A rank's part of the model (core/strategy/model_part.h: rank_model_part, the one place a layout becomes a
// ModelPart), against the whole model built in one process with the same seed: a pipeline stage's model
// holds the whole model's tensors of its layers under the whole model's names, with the same initial
// values; a split head's model holds its rows of the whole head; one process builds the whole model.
#include <QtTest>

#include <cstring>
#include <map>

#include "backend/cpu/cpu_backend.h"
#include "memory/ledger.h"
#include "nn/model.h"
#include "nn/model_spec.h"
#include "strategy/model_part.h"

using namespace hr;

namespace {

std::map<std::string, std::vector<float>> values_of(const Model& m) {
    std::map<std::string, std::vector<float>> out;
    for (const NamedTensor& t : m.state_dict()) {
        std::vector<float> v(static_cast<std::size_t>(t.tensor.numel()));
        std::memcpy(v.data(), t.tensor.raw(), v.size() * sizeof(float));
        out[t.name] = v;
    }
    return out;
}

ModelOptions options_with(const ModelPart& part) {
    ModelOptions o;
    o.batch = 4;
    o.seed = 7;
    o.part = part;
    return o;
}

}  // namespace

class ModelPartTest : public QObject {
    Q_OBJECT
    std::unique_ptr<Backend> m_cpu = make_cpu_backend(1, std::make_shared<MemoryLedger>());
    ModelSpec m_full = preset_model("mlp");

private slots:
    void oneProcessBuildsTheWholeModel() {
        const RankModelPart r = rank_model_part(m_full, RankLayout{}, RankPlace{}, {});
        QCOMPARE(r.spec.layers.size(), m_full.layers.size());
        QCOMPARE(r.part.layer_offset, 0);
        QVERIFY(r.part.name_prefixes.empty());
        QVERIFY(!r.part.stage_output);
        QCOMPARE(r.part.head_total, std::int64_t(0));
        Model part(r.spec, *m_cpu, options_with(r.part)), whole(m_full, *m_cpu, options_with({}));
        QVERIFY(values_of(part) == values_of(whole));
    }

    void aPipelineStageHoldsTheWholeModelsLayers() {
        Model whole(m_full, *m_cpu, options_with({}));
        const auto all = values_of(whole);
        RankLayout layout;
        layout.pipeline = 2;
        RankPlace place;
        place.split = pipeline_split(m_full, 2, {});
        std::size_t seen = 0;
        for (int stage = 0; stage < 2; ++stage) {
            place.stage = stage;
            const RankModelPart r = rank_model_part(m_full, layout, place, {});
            QCOMPARE(int(r.spec.layers.size()), place.split.layers(stage));
            QCOMPARE(r.part.layer_offset, place.split.first[std::size_t(stage)]);
            QVERIFY(r.part.stage_output);
            Model part(r.spec, *m_cpu, options_with(r.part));
            for (const auto& [name, v] : values_of(part)) {
                QVERIFY2(all.count(name), name.c_str());  // the whole model's name
                QVERIFY2(all.at(name) == v, name.c_str());  // and its initial values
                ++seen;
            }
        }
        QCOMPARE(seen, all.size());  // the stages hold every tensor of the whole model between them
    }

    void aSplitHeadHoldsItsRows() {
        Model whole(m_full, *m_cpu, options_with({}));
        const auto all = values_of(whole);
        RankLayout layout;
        layout.split_head = 2;
        for (int rank = 0; rank < 2; ++rank) {
            RankPlace place;
            place.head = tp_head_slice(tp_head_outputs(m_full, 2), 2, rank);
            bool summed = false;
            const RankModelPart r = rank_model_part(m_full, layout, place, [&](Tensor&) { summed = true; });
            QCOMPARE(r.part.head_first, place.head.first);
            QCOMPARE(r.part.head_total, place.head.total);
            Tensor none;
            r.part.head_input_grad_hook(none);
            QVERIFY(summed);
            Model part(r.spec, *m_cpu, options_with(r.part));
            const std::string head = std::to_string(m_full.layers.size() - 1);  // the last layer's state_dict prefix
            for (const auto& [name, v] : values_of(part)) {
                QVERIFY2(all.count(name), name.c_str());
                const std::vector<float>& w = all.at(name);
                if (name.rfind(head + ".", 0) == 0) {  // the head's weight and bias: rows [first, first + count)
                    const std::size_t per_row = w.size() / std::size_t(place.head.total);
                    QCOMPARE(v.size(), per_row * std::size_t(place.head.count));
                    QVERIFY2(std::equal(v.begin(), v.end(), w.begin() + std::ptrdiff_t(per_row * place.head.first)),
                             name.c_str());
                } else {
                    QVERIFY2(w == v, name.c_str());
                }
            }
        }
    }
};

QTEST_GUILESS_MAIN(ModelPartTest)
#include "test_model_part.moc"
