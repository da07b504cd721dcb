// Model spec: presets, JSON round trip, shape inference and the errors that name the layer.
#include <QtTest>

#include <filesystem>
#include <fstream>

#include "base/error.h"
#include "nn/model_spec.h"
#include "test_support.h"

using namespace hr;

class ModelSpecTest : public QObject {
    Q_OBJECT

private slots:
    void seedCnnIsExactlyTheIssueModel() {
        ModelSpec s = preset_model("seed-cnn");
        QStringList types;
        for (auto& l : s.layers) types << QString::fromStdString(l.type);
        QCOMPARE(types.join(","), QStringLiteral("conv2d,maxpool2d,relu,conv2d,maxpool2d,relu,flatten,linear,relu,linear"));
        SpecReport r = analyze_model_spec(s);
        QVERIFY(r.ok);
        // conv1 10*1*25+10, conv2 20*10*25+20, fc1 50*320+50, fc2 10*50+10
        QCOMPARE(r.total_params, std::int64_t(260 + 5020 + 16050 + 510));
        QCOMPARE(r.layers[7].input_shape, (Shape{320}));
        QCOMPARE(r.output_shape, (Shape{10}));
        QCOMPARE(r.layers[0].output_shape, (Shape{10, 24, 24}));
        QCOMPARE(r.layers[0].activation_bytes_per_sample, std::int64_t(10 * 24 * 24 * 4));
        QCOMPARE(r.layers[1].activation_bytes_per_sample, std::int64_t(10 * 12 * 12 * 8));  // values + i32 indices
        QCOMPARE(r.layers[6].activation_bytes_per_sample, std::int64_t(0));                 // flatten is a view
    }

    void allPresetsAreValid_data() {
        QTest::addColumn<QString>("name");
        QTest::addColumn<int>("channels");
        QTest::addColumn<int>("size");
        for (auto& n : preset_names()) QTest::newRow(n.c_str()) << QString::fromStdString(n) << 1 << 28;
        QTest::newRow("resnet-mini 32x32x3") << QStringLiteral("resnet-mini") << 3 << 32;
        QTest::newRow("lenet5 32x32") << QStringLiteral("lenet5") << 1 << 32;
    }
    void allPresetsAreValid() {
        QFETCH(QString, name);
        QFETCH(int, channels);
        QFETCH(int, size);
        ModelSpec s = preset_model(name.toStdString(), {channels, size, size});
        SpecReport r = analyze_model_spec(s);
        QVERIFY2(r.ok, r.error.c_str());
        QCOMPARE(r.output_shape, (Shape{10}));
        QVERIFY(r.total_params > 1000);
    }

    void mlpAndResnetShapes() {
        SpecReport mlp = analyze_model_spec(preset_model("mlp"));
        QCOMPARE(mlp.total_params, std::int64_t(784 * 256 + 256 + 256 * 128 + 128 + 128 * 10 + 10));
        SpecReport res = analyze_model_spec(preset_model("resnet-mini"));
        bool sawResidual = false, sawProjection = false;
        for (auto& l : res.layers) {
            if (l.type == "residual") sawResidual = true;
            if (l.path.find(".shortcut.0") != std::string::npos) sawProjection = true;
        }
        QVERIFY(sawResidual);
        QVERIFY(sawProjection);
    }

    void jsonRoundTrip() {
        for (auto& n : preset_names()) {
            ModelSpec s = preset_model(n);
            ModelSpec back = model_spec_from_json(nlohmann::json::parse(model_spec_to_json(s).dump()));
            QVERIFY(back == s);
        }
        std::string dir = hrtest::temp_dir("spec");
        ModelSpec s = preset_model("resnet-mini");
        save_model_spec(s, dir + "/m.json");
        QVERIFY(load_model_spec(dir + "/m.json") == s);
        // only the file itself: no temporary left behind
        int entries = 0;
        for (const auto& e : std::filesystem::directory_iterator(dir)) {
            ++entries;
            QCOMPARE(e.path().filename().string(), std::string("m.json"));
        }
        QCOMPARE(entries, 1);
    }

    void linearMismatchNamesTheLayer() {
        ModelSpec s = preset_model("seed-cnn");
        s.layers[7].attrs["in_features"] = 300;
        SpecReport r = analyze_model_spec(s);
        QVERIFY(!r.ok);
        QCOMPARE(r.layers[r.error_layer].path, std::string("7"));
        QVERIFY2(r.error.find("layer 7 (linear)") != std::string::npos, r.error.c_str());
        QVERIFY2(r.error.find("expects input (N, 300), got (N, 320)") != std::string::npos, r.error.c_str());
        QVERIFY2(r.error.find("set in_features to 320") != std::string::npos, r.error.c_str());
        QVERIFY_THROWS_EXCEPTION(InputError, validate_model_spec(s));
    }

    void convAfterFlattenIsExplained() {
        ModelSpec s = preset_model("seed-cnn");
        s.layers.insert(s.layers.begin() + 7, default_layer("conv2d"));
        SpecReport r = analyze_model_spec(s);
        QVERIFY(!r.ok);
        QVERIFY2(r.error.find("layer 7 (conv2d): expects input (N, 1, H, W), got (N, 320)") != std::string::npos,
                 r.error.c_str());
    }

    void residualMismatch() {
        ModelSpec s;
        s.input_shape = {1, 8, 8};
        LayerSpec r = default_layer("residual");
        LayerSpec c = default_layer("conv2d");
        c.attrs["in_channels"] = 1;
        c.attrs["out_channels"] = 4;
        r.body = {c};
        s.layers = {r};
        SpecReport rep = analyze_model_spec(s);
        QVERIFY(!rep.ok);
        QVERIFY2(rep.error.find("layer 0 (residual)") != std::string::npos, rep.error.c_str());
        QVERIFY2(rep.error.find("shortcut projection") != std::string::npos, rep.error.c_str());
    }

    void wrongClassCount() {
        ModelSpec s = preset_model("mlp");
        s.num_classes = 5;
        SpecReport r = analyze_model_spec(s);
        QVERIFY(!r.ok);
        QVERIFY2(r.error.find("out_features to 5") != std::string::npos, r.error.c_str());
    }

    void badJsonIsRejected_data() {
        QTest::addColumn<QString>("json");
        QTest::addColumn<QString>("expected");
        QTest::newRow("unknown type") << R"({"layers":[{"type":"conv3d"}]})" << "unknown layer type 'conv3d'";
        QTest::newRow("typo attribute") << R"({"layers":[{"type":"conv2d","kernal_size":3}]})" << "unknown attribute 'kernal_size'";
        QTest::newRow("negative kernel") << R"({"layers":[{"type":"conv2d","kernel_size":-1}]})" << "must be between";
        QTest::newRow("float channels") << R"({"layers":[{"type":"linear","in_features":1.5}]})" << "must be an integer";
        QTest::newRow("no layers") << R"({"name":"x"})" << "missing \"layers\"";
        QTest::newRow("bad input") << R"({"input":[0],"layers":[]})" << "positive integers";
        QTest::newRow("bad loss") << R"({"layers":[],"loss":{"type":"hinge"}})" << "unknown loss 'hinge'";
        QTest::newRow("empty residual") << R"({"layers":[{"type":"residual"}]})" << "non-empty \"body\"";
        QTest::newRow("unknown key") << R"({"layers":[],"optimiser":1})" << "unknown key 'optimiser'";
    }
    void badJsonIsRejected() {
        QFETCH(QString, json);
        QFETCH(QString, expected);
        try {
            model_spec_from_json(nlohmann::json::parse(json.toStdString()));
            QFAIL("no error");
        } catch (const InputError& e) {
            QVERIFY2(QString::fromUtf8(e.what()).contains(expected), e.what());
        }
    }

    void unreadableAndInvalidFiles() {
        std::string dir = hrtest::temp_dir("spec");
        QVERIFY_THROWS_EXCEPTION(InputError, load_model_spec(dir + "/missing.json"));
        {
            std::ofstream(dir + "/bad.json") << "{ not json";
        }
        try {
            load_model_spec(dir + "/bad.json");
            QFAIL("no error");
        } catch (const InputError& e) {
            QVERIFY(std::string(e.what()).find("not valid JSON") != std::string::npos);
        }
    }

    void catalogDefaults() {
        for (const auto& t : layer_catalog()) {
            if (t.group == "loss") continue;
            LayerSpec l = default_layer(t.type);
            for (const auto& a : t.attrs) QVERIFY(l.attrs.contains(a.name));
        }
        QVERIFY(find_layer_type("nope") == nullptr);
        QVERIFY_THROWS_EXCEPTION(InputError, default_layer("nope"));
    }
};

QTEST_APPLESS_MAIN(ModelSpecTest)
#include "test_model_spec.moc"
