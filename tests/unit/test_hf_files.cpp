// Hugging Face files: config.json -> the LLaMA layout of the model spec (fields checked by hand against
// transformers' published configs), every refusal of a bad config naming its field, sharded weights with
// model.safetensors.index.json (written, memory-mapped back, every damaged case refused with nothing
// changed), and peft's adapter layout (names, adapter_config.json fields).
#include <QtTest/QtTest>

#include <filesystem>
#include <fstream>

#include "base/error.h"
#include "io/hf_folder.h"
#include "io/safetensors.h"
#include "nn/hf_config.h"
#include "nn/model_spec.h"
#include "nn/transformer_spec.h"
#include "test_support.h"

using namespace hr;
namespace fs = std::filesystem;
using json = nlohmann::json;

namespace {

// Llama-3.2-1B's config.json as published (meta-llama/Llama-3.2-1B), trimmed of token ids.
const char* const kLlama32_1b = R"({
  "architectures": ["LlamaForCausalLM"], "attention_bias": false, "attention_dropout": 0.0,
  "bos_token_id": 128000, "eos_token_id": 128001, "head_dim": 64, "hidden_act": "silu",
  "hidden_size": 2048, "initializer_range": 0.02, "intermediate_size": 8192,
  "max_position_embeddings": 131072, "mlp_bias": false, "model_type": "llama",
  "num_attention_heads": 32, "num_hidden_layers": 16, "num_key_value_heads": 8, "pretraining_tp": 1,
  "rms_norm_eps": 1e-05,
  "rope_scaling": {"factor": 32.0, "high_freq_factor": 4.0, "low_freq_factor": 1.0,
                   "original_max_position_embeddings": 8192, "rope_type": "llama3"},
  "rope_theta": 500000.0, "tie_word_embeddings": true, "torch_dtype": "bfloat16",
  "transformers_version": "4.45.0.dev0", "use_cache": true, "vocab_size": 128256})";

// Qwen2.5-7B's (Qwen/Qwen2.5-7B).
const char* const kQwen25_7b = R"({
  "architectures": ["Qwen2ForCausalLM"], "attention_dropout": 0.0, "bos_token_id": 151643,
  "eos_token_id": 151643, "hidden_act": "silu", "hidden_size": 3584, "initializer_range": 0.02,
  "intermediate_size": 18944, "max_position_embeddings": 131072, "max_window_layers": 28,
  "model_type": "qwen2", "num_attention_heads": 28, "num_hidden_layers": 28, "num_key_value_heads": 4,
  "rms_norm_eps": 1e-06, "rope_theta": 1000000.0, "sliding_window": 131072, "tie_word_embeddings": false,
  "torch_dtype": "bfloat16", "use_cache": true, "use_sliding_window": false, "vocab_size": 152064})";

// Mistral-7B-v0.1's.
const char* const kMistral7b = R"({
  "architectures": ["MistralForCausalLM"], "bos_token_id": 1, "eos_token_id": 2, "hidden_act": "silu",
  "hidden_size": 4096, "initializer_range": 0.02, "intermediate_size": 14336,
  "max_position_embeddings": 32768, "model_type": "mistral", "num_attention_heads": 32,
  "num_hidden_layers": 32, "num_key_value_heads": 8, "rms_norm_eps": 1e-05, "rope_theta": 10000.0,
  "sliding_window": 4096, "tie_word_embeddings": false, "torch_dtype": "bfloat16", "vocab_size": 32000})";

// Damaged indexes of a two-shard folder (a, b).
const char* const kIndexTraversal = R"({"weight_map": {"a": "../../etc/passwd", "b": "model-00002-of-00002.safetensors"}})";
const char* const kIndexSwapped = R"({"weight_map": {"a": "model-00002-of-00002.safetensors", "b": "model-00001-of-00002.safetensors"}})";
const char* const kIndexExtra = R"({"weight_map": {"a": "model-00001-of-00002.safetensors", "b": "model-00002-of-00002.safetensors", "c": "model-00002-of-00002.safetensors"}})";
const char* const kIndexNotObject = R"({"weight_map": []})";

// The message of the InputError that parsing `j` throws ("" when it parses).
QString hf_refusal(const json& j) {
    try {
        parse_hf_config(j, "cfg.json");
    } catch (const InputError& e) {
        return QString::fromStdString(e.what());
    }
    return {};
}

SafeTensor hf_tensor(const std::string& name, Shape shape, float start) {
    SafeTensor t;
    t.name = name;
    t.dtype = DType::f32;
    t.shape = shape;
    const auto n = static_cast<std::size_t>(shape_numel(shape));
    t.data.resize(n * 4);
    for (std::size_t i = 0; i < n; ++i) {
        const float v = start + static_cast<float>(i) * 0.5f;
        std::memcpy(t.data.data() + 4 * i, &v, 4);
    }
    return t;
}

void hf_write_text(const fs::path& p, const std::string& s) {
    std::ofstream out(p, std::ios::binary);
    out << s;
}

}  // namespace

class TestHfFiles : public QObject {
    Q_OBJECT

private slots:
    void llamaConfigFields() {
        const HfConfig c = parse_hf_config(json::parse(kLlama32_1b), "llama/config.json");
        QCOMPARE(c.architecture, std::string("LlamaForCausalLM"));
        QCOMPARE(c.vocab_size, 128256);
        QCOMPARE(c.hidden_size, 2048);
        QCOMPARE(c.intermediate_size, 8192);
        QCOMPARE(c.num_hidden_layers, 16);
        QCOMPARE(c.num_attention_heads, 32);
        QCOMPARE(c.num_key_value_heads, 8);
        QCOMPARE(c.head_dim, 64);
        QCOMPARE(c.rms_norm_eps, 1e-5);
        QCOMPARE(c.rope_theta, 500000.0);
        QVERIFY(c.rope_scaling.has_value());
        QCOMPARE(c.rope_scaling->factor, 32.0);
        QCOMPARE(c.rope_scaling->original_max_position_embeddings, 8192);
        QVERIFY(c.tie_word_embeddings);
        QVERIFY(!c.qkv_bias);
        QCOMPARE(c.torch_dtype, std::string("bfloat16"));

        // the spec, as docs/model-spec.md's LLaMA layout writes it; seq defaults to 2048 (< 131072 positions)
        const json s = hf_model_spec_json(c);
        QCOMPARE(s["input"], json::array({2048}));
        QCOMPARE(s["num_classes"].get<int>(), 128256);
        const json& L = s["layers"];
        QCOMPARE(L.size(), std::size_t{16 + 3});
        QCOMPARE(L[0], json({{"type", "token_embedding"}, {"vocab_size", 128256}, {"dim", 2048}}));
        const json& b = L[1];
        QCOMPARE(b["type"].get<std::string>(), std::string("llama_block"));
        QCOMPARE(b["dim"].get<int>(), 2048);
        QCOMPARE(b["heads"].get<int>(), 32);
        QCOMPARE(b["kv_heads"].get<int>(), 8);
        QCOMPARE(b["hidden"].get<int>(), 8192);
        QVERIFY(!b.contains("head_dim"));  // 2048 / 32 = 64: the default
        QCOMPARE(b["rope_scaling"]["type"].get<std::string>(), std::string("llama3"));
        QCOMPARE(b["rope_scaling"]["low_freq_factor"].get<double>(), 1.0);
        QCOMPARE(b["max_positions"].get<int>(), 131072);
        QCOMPARE(b["qkv_bias"].get<bool>(), false);
        QCOMPARE(L[17], json({{"type", "rmsnorm"}, {"dim", 2048}, {"eps", 1e-5}}));
        QCOMPARE(L[18]["tied"].get<bool>(), true);
        QCOMPARE(hf_model_spec_json(c, 256)["input"], json::array({256}));
    }

    void qwenAndMistral() {
        const HfConfig q = parse_hf_config(json::parse(kQwen25_7b), "q");
        QCOMPARE(q.architecture, std::string("Qwen2ForCausalLM"));
        QVERIFY(q.qkv_bias);  // Qwen2 always has q/k/v biases
        QCOMPARE(q.head_dim, 128);  // 3584 / 28
        QCOMPARE(q.sliding_window, 0);  // use_sliding_window false
        QVERIFY(!q.tie_word_embeddings);
        QCOMPARE(hf_model_spec_json(q)["layers"][1]["qkv_bias"].get<bool>(), true);
        const HfConfig m = parse_hf_config(json::parse(kMistral7b), "m");
        QCOMPARE(m.architecture, std::string("MistralForCausalLM"));
        QCOMPARE(m.sliding_window, 4096);
        QVERIFY(!m.rope_scaling);
        QCOMPARE(m.num_key_value_heads, 8);
        // model_type alone is enough; defaults as transformers' config classes give them
        const json bare = {{"model_type", "llama"}, {"vocab_size", 100},     {"hidden_size", 64},
                           {"intermediate_size", 128}, {"num_hidden_layers", 2}, {"num_attention_heads", 4}};
        const HfConfig d = parse_hf_config(bare, "bare");
        QCOMPARE(d.num_key_value_heads, 4);
        QCOMPARE(d.head_dim, 16);
        QCOMPARE(d.rms_norm_eps, 1e-6);
        QCOMPARE(d.rope_theta, 10000.0);
        QCOMPARE(d.max_position_embeddings, 2048);
        QCOMPARE(hf_model_spec_json(d)["input"], json::array({2048}));
    }

    void badConfigsNameTheField() {
        const json good = json::parse(kLlama32_1b);
        struct Case {
            const char* key;
            json value;  // null: remove the key
            const char* expect;
        };
        const std::vector<Case> cases = {
            {"architectures", json::array({"GPTNeoXForCausalLM"}), "GPTNeoXForCausalLM"},
            {"hidden_size", nullptr, "\"hidden_size\" is missing"},
            {"hidden_size", 1000000000000LL, "\"hidden_size\" must be an integer from 2 to 65536"},
            {"hidden_size", "2048", "\"hidden_size\" must be an integer"},
            {"vocab_size", -5, "\"vocab_size\" must be an integer"},
            {"num_hidden_layers", 100000, "\"num_hidden_layers\""},
            {"num_key_value_heads", 5, "num_key_value_heads 5"},
            {"num_key_value_heads", 64, "\"num_key_value_heads\" must be an integer from 1 to 32"},
            {"head_dim", 63, "head size 63 must be even"},
            {"rms_norm_eps", 0, "\"rms_norm_eps\" must be a number greater than 0"},
            {"rope_theta", "big", "\"rope_theta\""},
            {"rope_scaling", json({{"rope_type", "yarn"}, {"factor", 4.0}}), "rope_scaling of type 'yarn'"},
            {"rope_scaling", json({{"rope_type", "llama3"}, {"factor", 8.0}}), "rope_scaling.low_freq_factor"},
            {"attention_bias", true, "attention_bias"},
            {"mlp_bias", true, "mlp_bias"},
            {"hidden_act", "gelu", "'gelu'"},
            {"torch_dtype", "float8_e4m3fn", "float8_e4m3fn"},
            {"tie_word_embeddings", "yes", "\"tie_word_embeddings\" must be true or false"},
        };
        for (const auto& c : cases) {
            json j = good;
            if (c.value.is_null()) j.erase(c.key);
            else j[c.key] = c.value;
            const QString m = hf_refusal(j);
            QVERIFY2(m.contains(QLatin1String(c.expect)), qPrintable(QStringLiteral("%1: '%2'").arg(QLatin1String(c.key), m)));
            QVERIFY2(m.startsWith(QLatin1String("cfg.json: ")), qPrintable(m));
        }
        QVERIFY(hf_refusal(json::array()).contains(QLatin1String("one JSON object")));
        QVERIFY(hf_refusal(json::object()).contains(QLatin1String("neither \"architectures\" nor \"model_type\"")));
        json hs = good;
        hs.erase("head_dim");
        hs["hidden_size"] = 2050;
        QVERIFY(hf_refusal(hs).contains(QLatin1String("hidden_size 2050 is not a multiple of num_attention_heads 32")));
    }

    void configFileAndFolder() {
        QTemporaryDir tmp;
        const fs::path d = tmp.path().toStdString();
        hf_write_text(d / "config.json", kMistral7b);
        const HfConfig c = load_hf_config(d.string());  // the folder
        QCOMPARE(c, load_hf_config((d / "config.json").string()));
        QCOMPARE(c.name, d.filename().string());
        // a huge file is refused before it is read
        hf_write_text(d / "big.json", std::string(kHfMaxConfigBytes + 10, ' '));
        try {
            load_hf_config((d / "big.json").string());
            QFAIL("a 1 MiB config.json was read");
        } catch (const InputError& e) {
            QVERIFY(QString::fromStdString(e.what()).contains(QLatin1String("larger than a config.json can be")));
        }
        try {
            load_hf_config((d / "nothere").string());
            QFAIL("a missing file was read");
        } catch (const InputError& e) {
            QVERIFY(QString::fromStdString(e.what()).contains(QLatin1String("file not found")));
        }
    }

    void configRoundTrip() {
        for (const char* text : {kLlama32_1b, kQwen25_7b}) {
            HfConfig c = parse_hf_config(json::parse(text), "x");
            c.sliding_window = 0;
            const json out = hf_config_json(c);
            HfConfig back = parse_hf_config(out, "out");
            back.name = c.name;
            QCOMPARE(back, c);
            QCOMPARE(out["architectures"][0].get<std::string>(), c.architecture);
        }
    }

    void specBackToConfig() {
        if (!find_layer_type("llama_block")) QSKIP("llama_block is not in this build's layer catalog");
        const HfConfig c = parse_hf_config(json::parse(kLlama32_1b), "l");
        const ModelSpec s = hf_model_spec(c, 128);
        QVERIFY(is_llama_layout(s));
        QCOMPARE(model_sequence_length(s), 128);
        HfConfig back = hf_config_of_spec(s, "bfloat16");
        back.name = c.name;
        QCOMPARE(back, c);
        // Llama-3.2-1B's parameters: 1,235,814,400 (the model card's 1.24B, tied head counted once)
        QCOMPARE(analyze_model_spec(s).total_params, 1235814400LL);
    }

    void shardedWeights() {
        QTemporaryDir tmp;
        const std::string d = tmp.path().toStdString();
        SafeTensorsFile f;
        f.tensors = {hf_tensor("model.embed_tokens.weight", {10, 4}, 0), hf_tensor("model.norm.weight", {4}, 1),
                     hf_tensor("lm_head.weight", {10, 4}, 2)};
        // 160 bytes for each matrix, 16 for the norm: a 200-byte limit makes two shards (160 + 16, 160)
        const auto files = write_hf_weights(d, f, 200);
        QCOMPARE(files, (std::vector<std::string>{"model-00001-of-00002.safetensors", "model-00002-of-00002.safetensors",
                                                  kHfIndexFile}));
        // the index as transformers writes it, read back with a plain JSON parser
        std::ifstream in(fs::path(d) / kHfIndexFile);
        const json idx = json::parse(in);
        QCOMPARE(idx["metadata"]["total_size"].get<int>(), 160 + 16 + 160);
        QCOMPARE(idx["weight_map"]["model.norm.weight"].get<std::string>(), std::string("model-00001-of-00002.safetensors"));
        QCOMPARE(idx["weight_map"]["lm_head.weight"].get<std::string>(), std::string("model-00002-of-00002.safetensors"));
        hf_write_text(fs::path(d) / "config.json", "{}");
        QVERIFY(is_hf_model_folder(d));
        const SafeTensorsFile back = read_hf_weights(d);
        QCOMPARE(back.tensors.size(), std::size_t{3});
        for (const auto& t : f.tensors) {
            const SafeTensor* b = back.find(t.name);
            QVERIFY(b);
            QVERIFY(b->mapped);  // memory-mapped, not copied
            QCOMPARE(b->shape, t.shape);
            QCOMPARE(std::memcmp(b->bytes(), t.data.data(), t.data.size()), 0);
        }
        // one file under the limit
        QTemporaryDir one;
        QCOMPARE(write_hf_weights(one.path().toStdString(), f), std::vector<std::string>{"model.safetensors"});
    }

    void damagedShardsAreRefused() {
        QTemporaryDir tmp;
        const fs::path d = tmp.path().toStdString();
        SafeTensorsFile f;
        f.tensors = {hf_tensor("a", {10, 4}, 0), hf_tensor("b", {10, 4}, 1)};
        write_hf_weights(d.string(), f, 100);
        auto refusal = [&]() -> QString {
            try {
                read_hf_weights(d.string());
            } catch (const InputError& e) {
                return QString::fromStdString(e.what());
            }
            return {};
        };
        const std::string index = [&] {
            std::ifstream in(d / kHfIndexFile);
            return std::string(std::istreambuf_iterator<char>(in), {});
        }();
        fs::rename(d / "model-00002-of-00002.safetensors", d / "elsewhere");
        QVERIFY2(refusal().contains(QLatin1String("names the shard model-00002-of-00002.safetensors, which is not in")),
                 qPrintable(refusal()));
        fs::rename(d / "elsewhere", d / "model-00002-of-00002.safetensors");
        QVERIFY(refusal().isEmpty());
        auto with_index = [&](const std::string& text) { hf_write_text(d / kHfIndexFile, text); };
        with_index(kIndexTraversal);
        QVERIFY(refusal().contains(QLatin1String("not a file name inside the folder")));
        with_index(kIndexSwapped);
        QVERIFY2(refusal().contains(QLatin1String("do not belong together")), qPrintable(refusal()));
        with_index(kIndexExtra);
        QVERIFY2(refusal().contains(QLatin1String("places tensor 'c'")), qPrintable(refusal()));
        with_index(kIndexNotObject);
        QVERIFY(refusal().contains(QLatin1String("\"weight_map\" object")));
        with_index(std::string(300, '[') + std::string(300, ']'));
        QVERIFY(!refusal().isEmpty());
        with_index(index);
        QVERIFY(refusal().isEmpty());
    }

    void peftLayout() {
        QCOMPARE(peft_name_of("model.layers.0.self_attn.q_proj.lora_A"),
                 std::string("base_model.model.model.layers.0.self_attn.q_proj.lora_A.weight"));
        QCOMPARE(headroom_name_of_peft("base_model.model.model.layers.3.mlp.down_proj.lora_B.weight"),
                 std::string("model.layers.3.mlp.down_proj.lora_B"));
        QCOMPARE(headroom_name_of_peft("base_model.model.model.layers.3.mlp.down_proj.weight"), std::string());
        QTemporaryDir tmp;
        const std::string d = tmp.path().toStdString();
        PeftAdapterConfig c;
        c.r = 2;
        c.lora_alpha = 8;
        c.lora_dropout = 0.05;
        c.target_modules = {"q_proj", "v_proj"};
        c.base_model_name_or_path = "../base";
        SafeTensorsFile a;
        a.tensors = {hf_tensor("model.layers.0.self_attn.q_proj.lora_A", {2, 4}, 0),
                     hf_tensor("model.layers.0.self_attn.q_proj.lora_B", {4, 2}, 0)};
        write_peft_adapter(d, c, a);
        std::ifstream in(fs::path(d) / "adapter_config.json");
        const json j = json::parse(in);  // what peft's LoraConfig.from_pretrained reads
        QCOMPARE(j["peft_type"].get<std::string>(), std::string("LORA"));
        QCOMPARE(j["task_type"].get<std::string>(), std::string("CAUSAL_LM"));
        QCOMPARE(j["r"].get<int>(), 2);
        QCOMPARE(j["lora_alpha"].get<double>(), 8.0);
        QCOMPARE(j["lora_dropout"].get<double>(), 0.05);
        QCOMPARE(j["target_modules"], json::array({"q_proj", "v_proj"}));
        const SafeTensorsFile raw = read_safetensors((fs::path(d) / "adapter_model.safetensors").string());
        QVERIFY(raw.find("base_model.model.model.layers.0.self_attn.q_proj.lora_A.weight"));
        QVERIFY(is_peft_adapter_folder(d));
        const PeftAdapter back = read_peft_adapter(d);
        QCOMPARE(back.config.r, 2);
        QCOMPARE(back.config.lora_dropout, 0.05);
        QCOMPARE(back.tensors.metadata.at("lora_scale"), std::string("4"));
        QVERIFY(back.tensors.find("model.layers.0.self_attn.q_proj.lora_B"));
        QCOMPARE(back.base_dir, (fs::path(d) / "../base").lexically_normal().string());
        // a rank that disagrees with r
        c.r = 3;
        write_peft_adapter(d, c, a);
        try {
            read_peft_adapter(d);
            QFAIL("an adapter of rank 2 was read as rank 3");
        } catch (const InputError& e) {
            QVERIFY(QString::fromStdString(e.what()).contains(QLatin1String("rank r = 3")));
        }
    }
};

QTEST_GUILESS_MAIN(TestHfFiles)
#include "test_hf_files.moc"
