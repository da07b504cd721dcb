// The layer registry (nn/layer_registry.h, issue 59): every layer type is one entry, and what the entry says
// agrees with the layer it builds. Checked from the code itself:
// - every type of the palette (layer_catalog) has an entry in the palette's order, with a shape rule, a cost and
//   a maker (residual: the walkers' structure; the losses: neither);
// - for every layer of every preset, the parameters the entry's shape rule counts (the spec report) equal the
//   parameters the built layer declares (Layer::params, the tensors the model allocates), and the output shape
//   the rule infers is the one the layer computes (Layer::output_shape).
#include <QtTest>

#include "nn/layer.h"
#include "nn/layer_registry.h"
#include "nn/model_spec.h"

using namespace hr;

class LayerRegistryTest : public QObject {
    Q_OBJECT

private slots:
    void everyTypeIsOneEntry() {
        const auto& catalog = layer_catalog();
        const auto& registry = layer_registry();
        QCOMPARE(catalog.size(), registry.size());
        for (std::size_t i = 0; i < catalog.size(); ++i) {
            const LayerEntry& e = registry[i];
            QCOMPARE(catalog[i].type, e.info.type);
            QCOMPARE(layer_entry(e.info.type), &e);
            QCOMPARE(find_layer_type(e.info.type), &e.info);
            const bool structure = e.info.type == "residual", loss = e.info.group == "loss";
            QVERIFY2((e.shape != nullptr) == (!structure && !loss), e.info.type.c_str());
            QVERIFY2((e.make != nullptr) == (!structure && !loss), e.info.type.c_str());
            QVERIFY2((e.cost != nullptr) == !loss, e.info.type.c_str());
            QVERIFY2(!e.info.help.empty(), e.info.type.c_str());
        }
        QVERIFY(layer_entry("no_such_layer") == nullptr);
    }

    void entriesAgreeWithTheLayersTheyBuild() {
        std::vector<std::string> names = preset_names();
        for (const auto& n : language_model_preset_names()) names.push_back(n);
        int checked = 0;
        for (const std::string& name : names) {
            if (name.rfind("llama-3", 0) == 0 || name.rfind("qwen", 0) == 0 || name.rfind("mistral", 0) == 0 ||
                name.rfind("gpt2-", 0) == 0)
                continue;  // (the big ones: the same types at larger sizes)
            const ModelSpec spec = preset_model(name);
            const SpecReport rep = validate_model_spec(spec);
            for (const LayerReport& r : rep.layers) {
                if (r.type == "residual") continue;
                // the spec of this row
                const std::vector<LayerSpec>* seq = &spec.layers;
                const LayerSpec* l = nullptr;
                std::size_t at = 0;
                while (at <= r.path.size()) {
                    const std::size_t dot = r.path.find('.', at);
                    const std::string part = r.path.substr(at, dot == std::string::npos ? std::string::npos : dot - at);
                    if (part == "body") seq = &l->body;
                    else if (part == "shortcut") seq = &l->shortcut;
                    else l = &(*seq)[std::stoul(part)];
                    if (dot == std::string::npos) break;
                    at = dot + 1;
                }
                QVERIFY(l);
                const std::unique_ptr<Layer> layer = make_layer(*l);
                std::int64_t declared = 0;
                for (const ParamDecl& p : layer->params(r.input_shape))
                    if (!p.tied_to_token_embedding) declared += shape_numel(p.shape);
                QVERIFY2(declared == r.params, qPrintable(QString("%1 layer %2 (%3): entry %4, layer %5")
                                                              .arg(name.c_str(), r.path.c_str(), r.type.c_str())
                                                              .arg(r.params).arg(declared)));
                QVERIFY2(layer->output_shape(r.input_shape) == r.output_shape,
                         qPrintable(QString("%1 layer %2 (%3)").arg(name.c_str(), r.path.c_str(), r.type.c_str())));
                ++checked;
            }
        }
        QVERIFY(checked > 40);
        qInfo("%d layers of the presets: entry and layer agree", checked);
    }
};

QTEST_GUILESS_MAIN(LayerRegistryTest)
#include "test_layer_registry.moc"
