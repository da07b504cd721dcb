#pragma once
// What the ONNX export's tests (tests/runtime/test_onnx_export*.cpp) check a file with: ONNX's own checker
// (/usr/bin/python3's python3-onnx 1.12: full_check, strict shape inference), ONNX Runtime (onnxruntime-node,
// tests/support/onnx_runtime_run.mjs) and Headroom's CPU forward of the same weights, compared logit by logit.
#include <QString>
#include <QStringList>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <fstream>
#include <memory>
#include <string>
#include <vector>

#include "backend/backend.h"
#include "io/safetensors.h"
#include "memory/ledger.h"
#include "nn/model.h"
#include "programs.h"
#include "test_support.h"
#include "train/checkpoint.h"
#include "train/device.h"

namespace hrtest::onnx {

inline std::string modules() { return source_path("tests/runtimes/node_modules"); }

// "" when the runtimes are here; else why the test skips
inline QString missing_runtimes() {
    if (!std::filesystem::exists(modules() + "/onnxruntime-node"))
        return "tests/runtimes/node_modules has no onnxruntime-node: scripts/setup installs it (npm ci)";
    if (run_program("node", {"--version"}).exit_code != 0) return "node is not installed (Debian's nodejs)";
    if (run_program("/usr/bin/python3", {"-c", "import onnx"}).exit_code != 0)
        return "python3-onnx is not installed (scripts/setup installs it)";
    return {};
}

inline void write_floats(const std::string& path, const std::vector<float>& v) {
    std::ofstream f(path, std::ios::binary);
    f.write(reinterpret_cast<const char*>(v.data()), static_cast<std::streamsize>(v.size() * sizeof(float)));
}
inline std::vector<float> read_floats(const std::string& path) {
    std::ifstream f(path, std::ios::binary | std::ios::ate);
    if (!f) return {};
    std::vector<float> v(static_cast<std::size_t>(f.tellg()) / sizeof(float));
    f.seekg(0);
    f.read(reinterpret_cast<char*>(v.data()), static_cast<std::streamsize>(v.size() * sizeof(float)));
    return v;
}

// ONNX's checker, full (every node against its schema, shape inference), then strict shape inference on its
// own: exit 0 and "opset 17 ir 8 logits batch,K" (the output's inferred dims) when the file is accepted.
inline ProcessResult check_with_onnx(const std::string& file) {
    return run_program(
        "/usr/bin/python3",
        {"-c",
         "import onnx, sys\n"
         "m = onnx.load(sys.argv[1])\n"
         "onnx.checker.check_model(m, full_check=True)\n"
         "i = onnx.shape_inference.infer_shapes(m, check_type=True, strict_mode=True)\n"
         "o = i.graph.output[0]\n"
         "d = ','.join(x.dim_param or str(x.dim_value) for x in o.type.tensor_type.shape.dim)\n"
         "print('opset', m.opset_import[0].version, 'ir', m.ir_version, o.name, d)\n",
         QString::fromStdString(file)});
}

// ONNX Runtime's logits for `count` samples of shape `sample` (comma-separated) fed `batch` at a time; empty
// when it failed (its output is logged).
inline std::vector<float> run_onnx(const std::string& file, const std::string& input, const QString& sample,
                                   std::int64_t count, int batch, const std::string& out) {
    const auto r = run_program("node",
                               {qsource_path("tests/support/onnx_runtime_run.mjs"), QString::fromStdString(modules()),
                                QString::fromStdString(file), QString::fromStdString(input), sample,
                                QString::number(count), QString::number(batch), QString::fromStdString(out)},
                               QString(), 600000);
    if (r.exit_code != 0) qWarning("%s", qPrintable(r.output));
    return r.exit_code == 0 ? read_floats(out) : std::vector<float>{};
}

// Headroom's logits for `count` samples given as the model sees them (normalised), on the CPU backend, 500 at a time.
inline std::vector<float> headroom_logits(const std::string& weights, const std::vector<float>& x, std::int64_t count) {
    using namespace hr;
    SafeTensorsFile file = read_safetensors(weights);
    const ModelSpec spec = model_spec_of(file, weights);
    auto ledger = std::make_shared<MemoryLedger>();
    std::unique_ptr<Backend> be = make_backend("cpu", 2, ledger, false, nullptr);
    const std::int64_t M = 500, per = shape_numel(spec.input_shape);
    ModelOptions mo;
    mo.batch = M;
    Model model(spec, *be, mo);
    load_model_state(model, file, weights);
    Shape xs{M};
    for (auto d : spec.input_shape) xs.push_back(d);
    Tensor xt = Tensor::empty(be->allocator(), xs, DType::f32, MemCategory::data);
    std::vector<float> out;
    for (std::int64_t i = 0; i < count; i += M) {
        const std::int64_t n = std::min(M, count - i);
        Tensor xb = xt.slice0(0, n);
        be->copy_from_host(x.data() + i * per, xb);
        Tensor y = model.forward(xb, false);
        std::vector<float> h(static_cast<std::size_t>(y.numel()));
        be->copy_to_host(y, h.data());
        out.insert(out.end(), h.begin(), h.end());
    }
    return out;
}

inline int argmax(const float* p, int n) { return static_cast<int>(std::max_element(p, p + n) - p); }

struct Agreement {
    double same_prediction = 0;  // share of samples whose argmax is the same
    double max_abs = 0;          // the largest |logit difference|
    std::int64_t correct = 0;    // ONNX Runtime's argmax equal to the label
};
// `ort` against `ours` (both count x classes); correct counts ONNX Runtime's hits on `labels` (may be shorter)
inline Agreement compare(const std::vector<float>& ort, const std::vector<float>& ours, int classes,
                         const std::vector<std::int64_t>& labels) {
    Agreement a;
    const std::int64_t n = static_cast<std::int64_t>(ours.size()) / classes;
    std::int64_t same = 0;
    for (std::int64_t i = 0; i < n; ++i) {
        const float* p = ort.data() + i * classes;
        const float* q = ours.data() + i * classes;
        same += argmax(p, classes) == argmax(q, classes);
        if (i < static_cast<std::int64_t>(labels.size())) a.correct += argmax(p, classes) == labels[std::size_t(i)];
        for (int k = 0; k < classes; ++k) a.max_abs = std::max(a.max_abs, double(std::fabs(p[k] - q[k])));
    }
    a.same_prediction = n ? double(same) / double(n) : 0;
    return a;
}

}  // namespace hrtest::onnx
