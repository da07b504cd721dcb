// Interoperability with PyTorch (docs/design.md decision 6): every preset, built on the CPU backend and
// written with model_state_file + write_safetensors, loads into the equivalent torch.nn model with
// load_state_dict(strict=True), and torch computes the same logits (max abs difference < 1e-4) on the
// same inputs in eval mode. The check itself is bench/torch_interop.py, run with Debian's python3-torch;
// the test is skipped where /usr/bin/python3 cannot import torch.
#include <QJsonDocument>
#include <QJsonObject>
#include <QProcess>
#include <QtTest>

#include <algorithm>
#include <cstdio>
#include <fstream>
#include <random>
#include <set>

#include "backend/cpu/cpu_backend.h"
#include "io/safetensors.h"
#include "nn/model.h"
#include "test_support.h"
#include "train/checkpoint.h"

using namespace hr;

namespace {

const char* kPython = "/usr/bin/python3";

void write_f32(const std::string& path, const std::vector<float>& v) {
    std::ofstream f(path, std::ios::binary | std::ios::trunc);
    f.write(reinterpret_cast<const char*>(v.data()), static_cast<std::streamsize>(v.size() * sizeof(float)));
    QVERIFY2(f.good(), path.c_str());
}

}  // namespace

class TorchInteropTest : public QObject {
    Q_OBJECT

private:
    bool m_haveTorch = false;
    QString m_whyNot;
    std::set<std::string> m_checked;  // "preset CxHxW" for each check PyTorch passed

    // Builds the preset, runs two training-mode forwards (so BatchNorm's running statistics are not
    // the initial 0/1) and one eval-mode forward on random inputs, writes weights, inputs and logits,
    // and asks PyTorch to compare.
    void checkPreset(const std::string& name, const Shape& input_shape) {
        const std::int64_t n = 8;
        auto be = make_cpu_backend(2, std::make_shared<MemoryLedger>());
        ModelSpec spec = preset_model(name, input_shape, 10);
        ModelOptions opt;
        opt.batch = n;
        opt.seed = 7;
        Model model(spec, *be, opt);

        Shape xs{n};
        for (auto d : input_shape) xs.push_back(d);
        Tensor x = Tensor::empty(be->allocator(), xs, DType::f32, MemCategory::data);
        std::mt19937_64 g(11);
        std::normal_distribution<float> dist(0.0f, 1.0f);
        std::vector<float> inputs(static_cast<std::size_t>(x.numel()));
        for (int pass = 0; pass < 2; ++pass) {
            for (auto& v : inputs) v = dist(g) * 0.8f + 0.1f * static_cast<float>(pass);
            be->copy_from_host(inputs.data(), x);
            model.forward(x, /*training=*/true, static_cast<std::uint64_t>(pass));
        }
        for (auto& v : inputs) v = dist(g);
        be->copy_from_host(inputs.data(), x);
        Tensor logits = model.forward(x, /*training=*/false);
        QCOMPARE(logits.shape(), (Shape{n, 10}));
        std::vector<float> out(static_cast<std::size_t>(logits.numel()));
        be->copy_to_host(logits, out.data());

        const std::string dir = hrtest::temp_dir("torch-interop-" + name);
        const std::string weights = dir + "/model.safetensors", in = dir + "/inputs.f32", lg = dir + "/logits.f32";
        write_safetensors(weights, model_state_file(model));
        write_f32(in, inputs);
        write_f32(lg, out);

        QProcess p;
        p.setProcessChannelMode(QProcess::MergedChannels);
        p.start(QString::fromUtf8(kPython),
                {hrtest::qsource_path("bench/torch_interop.py"), QString::fromStdString(weights),
                 QString::fromStdString(in), QString::fromStdString(lg), QString::number(n)});
        QVERIFY2(p.waitForFinished(300000), "torch_interop.py did not finish within 5 minutes");
        const QByteArray text = p.readAll();
        qInfo("%s: %s", name.c_str(), text.trimmed().constData());
        QVERIFY2(p.exitStatus() == QProcess::NormalExit && p.exitCode() == 0,
                 qPrintable(QStringLiteral("%1: PyTorch did not load the weights or computed other logits:\n%2")
                                .arg(QString::fromStdString(name), QString::fromUtf8(text))));
        // the script prints {"loaded": K, "max_abs_diff": D}; check it agrees with the exit code
        const QByteArray last = text.trimmed().split('\n').last();
        const QJsonObject o = QJsonDocument::fromJson(last).object();
        QVERIFY2(o.contains(QStringLiteral("max_abs_diff")), last.constData());
        QVERIFY(o.value(QStringLiteral("max_abs_diff")).toDouble() < 1e-4);
        QCOMPARE(o.value(QStringLiteral("loaded")).toInt(), static_cast<int>(model.state_dict().size()));
        m_checked.insert(name + " " + shape_str(input_shape));
    }

private slots:
    void initTestCase() {
        QProcess p;
        p.start(QString::fromUtf8(kPython), {QStringLiteral("-c"), QStringLiteral("import torch, numpy")});
        if (!p.waitForStarted(10000)) {
            m_whyNot = QStringLiteral("%1 is not available").arg(QString::fromUtf8(kPython));
            return;
        }
        p.waitForFinished(120000);
        m_haveTorch = p.exitStatus() == QProcess::NormalExit && p.exitCode() == 0;
        if (!m_haveTorch)
            m_whyNot = QStringLiteral("%1 cannot import torch and numpy (Debian: python3-torch)").arg(QString::fromUtf8(kPython));
    }

    void presets_data() {
        QTest::addColumn<QString>("preset");
        QTest::addColumn<int>("channels");
        QTest::addColumn<int>("size");
        for (const auto& name : preset_names())
            QTest::newRow(name.c_str()) << QString::fromStdString(name) << 1 << 28;
        QTest::newRow("resnet-mini-32x32x3") << QStringLiteral("resnet-mini") << 3 << 32;
    }

    void presets() {
        if (!m_haveTorch) QSKIP(qPrintable(m_whyNot));
        QFETCH(QString, preset);
        QFETCH(int, channels);
        QFETCH(int, size);
        checkPreset(preset.toStdString(), Shape{channels, size, size});
    }

    void everyPresetIsCovered() {
        // runs after presets(): every preset (and resnet-mini on 32x32 RGB) was loaded by PyTorch and
        // computed the same logits, none was skipped or lost from presets_data()
        if (!m_haveTorch) QSKIP(qPrintable(m_whyNot));
        std::set<std::string> want;
        for (const auto& name : preset_names()) want.insert(name + " " + shape_str(Shape{1, 28, 28}));
        want.insert("resnet-mini " + shape_str(Shape{3, 32, 32}));
        for (const char* named : {"seed-cnn", "mlp", "lenet5", "resnet-mini"})  // the foundation issue's four
            QVERIFY2(want.count(std::string(named) + " " + shape_str(Shape{1, 28, 28})), named);
        std::string missing;
        for (const auto& w : want)
            if (!m_checked.count(w)) missing += " " + w;
        QVERIFY2(m_checked == want, ("not checked:" + missing).c_str());
    }
};

QTEST_GUILESS_MAIN(TorchInteropTest)
#include "test_torch_interop.moc"
