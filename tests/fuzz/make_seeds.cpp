// Writes the fuzzers' seed corpora: small real files and files from our own writers.
//   cmake --build build-fuzz --target hr_fuzz_seeds && build-fuzz/tests/fuzz/hr_fuzz_seeds tests/fuzz/corpus [FASHION_MNIST_DIR]
// Each seed stays small (a few KB): libFuzzer's input length follows the largest seed.
#include <zlib.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <iostream>

#include "backend/cpu/cpu_backend.h"
#include "io/safetensors.h"
#include "strategy/training_state.h"
#include "train/resume.h"
#include "nn/model_spec.h"
#include "train/config.h"

namespace fs = std::filesystem;
using json = nlohmann::json;

namespace {

void put(const fs::path& p, const std::string& bytes) {
    fs::create_directories(p.parent_path());
    std::ofstream(p, std::ios::binary).write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
    std::cout << p.string() << " (" << bytes.size() << " bytes)\n";
}

std::string be32(std::uint32_t v) {
    std::string s(4, '\0');
    for (int i = 0; i < 4; ++i) s[i] = static_cast<char>((v >> (24 - 8 * i)) & 0xff);
    return s;
}

// The first `n` bytes of a gzip file, decompressed (or, with raw = true, as stored).
std::string head(const std::string& path, std::size_t n, bool raw) {
    if (raw) {
        std::ifstream in(path, std::ios::binary);
        std::string s(n, '\0');
        in.read(s.data(), static_cast<std::streamsize>(n));
        s.resize(static_cast<std::size_t>(in.gcount()));
        return s;
    }
    gzFile f = gzopen(path.c_str(), "rb");
    if (!f) return "";
    std::string s(n, '\0');
    int got = gzread(f, s.data(), static_cast<unsigned>(n));
    gzclose(f);
    s.resize(got > 0 ? static_cast<std::size_t>(got) : 0);
    return s;
}

}  // namespace

int main(int argc, char** argv) {
    if (argc < 2) {
        std::cerr << "usage: hr_fuzz_seeds CORPUS_DIR [FASHION_MNIST_DIR]\n";
        return 2;
    }
    const fs::path out = argv[1];
    const std::string fm = argc > 2 ? argv[2] : "/usr/share/datasets/fashion-mnist";

    // idx: a mode byte (bit 0 labels, bit 1 gzip the rest, bits 2.. num_classes - 1), then the file
    const char images_raw = 0, labels10_raw = static_cast<char>(1 | (9 << 2)), images_gz = 2;
    put(out / "idx/fmnist-train-images-head", images_raw + head(fm + "/train-images-idx3-ubyte.gz", 16 + 2 * 784, false));
    put(out / "idx/fmnist-train-labels-head", labels10_raw + head(fm + "/train-labels-idx1-ubyte.gz", 8 + 64, false));
    put(out / "idx/fmnist-t10k-images-gz-head", images_raw + head(fm + "/t10k-images-idx3-ubyte.gz", 1024, true));
    std::string small = be32(0x803) + be32(3) + be32(4) + be32(4);
    for (int i = 0; i < 48; ++i) small += static_cast<char>(i * 5);
    put(out / "idx/small-images", images_raw + small);
    put(out / "idx/small-images-gz", images_gz + small);
    put(out / "idx/small-labels", labels10_raw + be32(0x801) + be32(5) + std::string("\0\1\2\3\4", 5));
    put(out / "idx/labels-claiming-4g", labels10_raw + be32(0x801) + be32(0xffffffffu));

    // safetensors: written by our writer
    hr::SafeTensorsFile st;
    st.metadata = {{"format", "pt"}, {"headroom.step", "12"}};
    auto tensor = [](const std::string& name, hr::DType dt, hr::Shape shape) {
        hr::SafeTensor t{name, dt, shape, {}};
        t.data.resize(static_cast<std::size_t>(hr::shape_numel(shape)) * hr::dtype_size(dt));
        for (std::size_t i = 0; i < t.data.size(); ++i) t.data[i] = static_cast<std::uint8_t>(i * 7);
        return t;
    };
    st.tensors = {tensor("0.weight", hr::DType::f32, {2, 3}), tensor("0.bias", hr::DType::bf16, {2}),
                  tensor("1.num_batches_tracked", hr::DType::i64, {}), tensor("empty", hr::DType::f16, {0, 4}),
                  tensor("mask", hr::DType::u8, {5})};
    fs::create_directories(out / "safetensors");
    hr::write_safetensors((out / "safetensors/tiny.safetensors").string(), st);
    hr::SafeTensorsFile one;
    one.tensors = {tensor("w", hr::DType::f64, {1, 1, 2})};
    hr::write_safetensors((out / "safetensors/one.safetensors").string(), one);

    // model specs: the presets (seed-cnn, mlp, lenet5, resnet-mini with nested residual blocks)
    for (const auto& name : hr::preset_names())
        put(out / ("model_spec/" + name + ".json"), hr::model_spec_to_json(hr::preset_model(name)).dump());

    // run.json: the config object next to a few of the record's fields; and a bare config
    hr::TrainConfig c;
    c.model = hr::preset_model("seed-cnn");
    c.data = "synthetic";
    c.steps = 20;
    put(out / "config/run.json",
        json{{"status", "completed"}, {"test_accuracy", 0.8125}, {"config", hr::train_config_to_json(c)}}.dump());
    hr::TrainConfig d;
    d.model = hr::preset_model("mlp");
    d.optimizer.kind = "adamw";
    d.strategy.precision = "bf16";
    d.strategy.accumulate = 4;
    d.strategy.checkpoint = "every:2";
    put(out / "config/mlp-bf16.json", hr::train_config_to_json(d).dump());

    // checkpoint: fuzz_checkpoint's tiny run (linear 4->3, SGD with momentum) written by write_checkpoint,
    // as u32 length + checkpoint-STEP.json + checkpoint-STEP.safetensors; and the JSON alone
    {
        auto be = hr::make_cpu_backend(1, std::make_shared<hr::MemoryLedger>());
        const hr::ModelSpec spec = hr::model_spec_from_json(json::parse(
            R"({"name":"tiny","input":[4],"num_classes":3,"layers":[{"type":"linear","in_features":4,"out_features":3}]})"));
        hr::OptimizerConfig o;
        o.momentum = 0.9;
        hr::TrainingState state(spec, o, hr::resolve_strategy({}, spec, 2), 1, *be, be->allocator(), *be, be->allocator());
        hr::RunCursor cur;
        cur.step = 5;
        cur.epoch = 2;
        cur.step_in_epoch = 1;
        cur.total_steps = 10;
        cur.loss_sum = 2.5;
        cur.correct = 1;
        cur.seen = 2;
        hr::EpochEvent e;
        e.epoch = 1;
        e.step = 4;
        e.train_loss = 1.1;
        e.train_accuracy = 0.5;
        e.test_loss = NAN;
        e.test_accuracy = NAN;
        cur.epochs = {e};
        const fs::path tmp = fs::temp_directory_path() / "hr-fuzz-seed-checkpoint";
        fs::remove_all(tmp);
        const std::string js = hr::write_checkpoint(tmp.string(), state, cur, 1);
        auto slurp = [](const std::string& p) {
            std::ifstream in(p, std::ios::binary);
            return std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
        };
        const std::string text = slurp(js), tensors = slurp(js.substr(0, js.size() - 5) + ".safetensors");
        auto le32 = [](std::uint32_t v) {
            std::string s(4, '\0');
            for (int i = 0; i < 4; ++i) s[i] = static_cast<char>((v >> (8 * i)) & 0xff);
            return s;
        };
        put(out / "checkpoint/tiny-step5", le32(static_cast<std::uint32_t>(text.size())) + text + tensors);
        put(out / "checkpoint/json-only", le32(static_cast<std::uint32_t>(text.size())) + text);
        fs::remove_all(tmp);
    }
    return 0;
}
