// The planner's fast paths (issue 46 item 6: planning a 70B config quickly) against the slower forms they
// replace, which stay in the code as the reference: the shared spec report against a fresh analysis (and a
// spec changed after it was cached), the model's state bytes against its state_dict, the checkpoint blocks
// from a given report against those from the spec, a pipeline stage's spec against the whole spec copied and
// cut (the earlier construction), the block count and every stage's first node against the longer forms, and
// a parameter count against a hand account.
#include <QtTest>

#include <map>

#include "backend/cpu/cpu_backend.h"
#include "memory/counting_allocator.h"
#include "memory/ledger.h"
#include "nn/model.h"
#include "nn/model_spec.h"
#include "strategy/pipeline.h"
#include "tensor/quantized_format.h"

using namespace hr;

namespace {

// the earlier pipeline_stage_spec: the whole spec copied, then its layers replaced
ModelSpec stage_by_copy(const ModelSpec& spec, const PipelineSplit& split, int stage) {
    const int a = split.first[static_cast<std::size_t>(stage)], b = split.first[static_cast<std::size_t>(stage) + 1];
    ModelSpec s = spec;
    s.name = spec.name + " (stage " + std::to_string(stage) + ")";
    s.layers.assign(spec.layers.begin() + a, spec.layers.begin() + b);
    if (pipeline_copies_tied_head(spec, split, stage))
        for (LayerSpec& l : s.layers)
            if (l.type == "lm_head") l.attrs["tied"] = false;
    if (stage > 0) s.input_shape = pipeline_layer_output(spec, a - 1);
    return s;
}

}  // namespace

class PlanFastPathsTest : public QObject {
    Q_OBJECT
    std::unique_ptr<Backend> m_cpu = make_cpu_backend(1, std::make_shared<MemoryLedger>());

private slots:
    void sharedReportIsTheAnalysis() {
        for (const char* name : {"seed-cnn", "resnet-mini", "gpt-tiny", "llama-tiny", "llama-3.1-8b"}) {
            const ModelSpec spec = preset_model(name);
            const auto shared = analyze_model_spec_shared(spec);
            const SpecReport copy = analyze_model_spec(spec);
            QVERIFY(shared);
            QCOMPARE(shared->ok, copy.ok);
            QCOMPARE(shared->total_params, copy.total_params);
            QCOMPARE(shared->layers.size(), copy.layers.size());
            QVERIFY(analyze_model_spec_shared(ModelSpec(spec)) == shared);  // an equal spec: the cached report
        }
        // by hand, and a spec changed after its report was cached gets its own report
        ModelSpec mlp = preset_model("mlp");  // 784-256-128-10: 200,960 + 32,896 + 1,290
        QCOMPARE(analyze_model_spec_shared(mlp)->total_params, std::int64_t{784 * 256 + 256 + 256 * 128 + 128 + 128 * 10 + 10});
        for (LayerSpec& l : mlp.layers)
            if (l.type == "linear" && l.attrs.value("out_features", std::int64_t{0}) == 256) l.attrs["out_features"] = 200;
        for (LayerSpec& l : mlp.layers)
            if (l.type == "linear" && l.attrs.value("in_features", std::int64_t{0}) == 256) l.attrs["in_features"] = 200;
        QCOMPARE(analyze_model_spec_shared(mlp)->total_params, std::int64_t{784 * 200 + 200 + 200 * 128 + 128 + 128 * 10 + 10});
    }

    void stateBytesAreTheStateDicts() {
        struct Case {
            const char* preset;
            int lora;
            int bits;
            DType dtype;
        };
        for (const Case& c : {Case{"resnet-mini", 0, 0, DType::f32}, Case{"gpt-tiny", 0, 0, DType::f32},
                              Case{"gpt-tiny", 4, 0, DType::bf16}, Case{"llama-tiny", 8, kQuantNf4, DType::bf16},
                              Case{"llama-3.1-8b", 16, kQuantNf4, DType::bf16}}) {
            CountingAllocator counting(Device::cpu());
            ModelOptions mo;
            mo.batch = 2;
            mo.dtype = c.dtype;
            mo.allocator = &counting;
            mo.dry_run = true;
            mo.lora_rank = c.lora;
            mo.lora_base_bits = c.bits;
            const Model m(preset_model(c.preset), *m_cpu, mo);
            std::map<int, std::size_t> params;
            double buffers = 0;
            int tied = 0;
            for (const NamedTensor& t : m.state_dict()) {
                if (t.is_buffer()) buffers += static_cast<double>(t.tensor.nbytes());
                else if (!t.tied) params[t.layer] += t.tensor.nbytes();
                tied += t.tied ? 1 : 0;
            }
            const Model::StateBytes sb = m.state_bytes();
            QVERIFY2(sb.layer_param_bytes == params, c.preset);
            QCOMPARE(sb.buffer_bytes, buffers);
            if (std::string(c.preset) == "resnet-mini") QVERIFY(buffers > 0);  // BatchNorm's running statistics
            if (std::string(c.preset) == "gpt-tiny") QCOMPARE(tied, 1);        // the head is the embedding's weight
        }
    }

    void checkpointBlocksFromTheReport() {
        for (const char* name : {"seed-cnn", "resnet-mini", "vit-tiny", "gpt-tiny", "llama-3.2-1b"}) {
            const ModelSpec spec = preset_model(name);
            const auto a = checkpoint_blocks(spec);
            const auto b = checkpoint_blocks(spec, analyze_model_spec(spec));
            QCOMPARE(a.size(), b.size());
            for (std::size_t i = 0; i < a.size(); ++i) {
                QCOMPARE(a[i].first, b[i].first);
                QCOMPARE(a[i].last, b[i].last);
                QCOMPARE(a[i].label, b[i].label);
            }
        }
        for (const char* name : {"seed-cnn", "mlp", "lenet5", "resnet-mini", "vit-tiny", "gpt-tiny", "llama-3.1-70b"})
            QCOMPARE(checkpoint_block_count(preset_model(name)), static_cast<int>(checkpoint_blocks(preset_model(name)).size()));
        // llama-3.2-1b: the token embedding, 16 blocks, the final norm with the head after it
        QCOMPARE(checkpoint_blocks(preset_model("llama-3.2-1b")).size(), std::size_t{18});
    }

    void stageSpecsAreTheWholeSpecCut() {
        for (const char* name : {"gpt-tiny", "llama-tiny", "llama-3.1-8b", "resnet-mini"}) {
            const ModelSpec spec = preset_model(name);
            const int L = static_cast<int>(spec.layers.size());
            for (int K : {2, 3, 4}) {
                if (K > L) continue;
                const PipelineSplit split = pipeline_balanced_split(spec, K, true);
                int layers = 0;
                for (int k = 0; k < K; ++k) {
                    const ModelSpec fast = pipeline_stage_spec(spec, split, k);
                    QVERIFY2(fast == stage_by_copy(spec, split, k), name);
                    QCOMPARE(fast.loss.type, spec.loss.type);
                    QCOMPARE(fast.num_classes, spec.num_classes);
                    layers += static_cast<int>(fast.layers.size());
                }
                QCOMPARE(layers, L);
                // every stage's first node at once, against each stage's alone and a count of the report's rows
                const std::vector<int> offsets = pipeline_node_offsets(spec, split);
                const SpecReport rep = analyze_model_spec(spec);
                for (int k = 0; k < K; ++k) {
                    QCOMPARE(offsets[static_cast<std::size_t>(k)], pipeline_node_offset(spec, split, k));
                    int before = 0;
                    for (const LayerReport& r : rep.layers)
                        if (std::stoi(r.path.substr(0, r.path.find('.'))) < split.first[static_cast<std::size_t>(k)]) ++before;
                    QCOMPARE(offsets[static_cast<std::size_t>(k)], before);
                }
            }
        }
    }
};

QTEST_MAIN(PlanFastPathsTest)
#include "test_plan_fast_paths.moc"
