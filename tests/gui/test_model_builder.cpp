// The model builder inside the main window: building a preset by hand, undo/redo, files, errors.
#include <QAction>
#include <QDir>
#include <QSpinBox>
#include <QStandardPaths>
#include <QTemporaryDir>
#include <QTest>
#include <QTreeWidget>
#include <QUndoStack>

#include "builder/ModelBuilder.h"
#include "gui/MainWindow.h"
#include "nn/model_spec.h"

using hrw::LayerPath;

class TestModelBuilder : public QObject {
    Q_OBJECT
private slots:
    void initTestCase() {
        QStandardPaths::setTestModeEnabled(true);
        QCoreApplication::setOrganizationName(QStringLiteral("HeadroomTest"));
    }

    void aOneDimensionalInputKeepsItsRank() {
        // a table's (F) or a sequence's (T): one field, and an edit keeps the input 1-D (not F x 1 x 1)
        hrapp::MainWindow w;
        w.setPersistState(false);
        w.show();
        hrw::ModelBuilder* b = w.builder();
        b->resetSpec(hr::preset_model("tabular-mlp", {3}, 2));
        auto* c = b->findChild<QSpinBox*>(QStringLiteral("inputC"));
        auto* h = b->findChild<QSpinBox*>(QStringLiteral("inputH"));
        QVERIFY(c && h);
        QCOMPARE(c->value(), 3);
        QVERIFY(!h->isVisible());
        c->setValue(5);
        QCOMPARE(b->spec().input_shape, (hr::Shape{5}));
        b->resetSpec(hr::preset_model("seed-cnn"));
        QVERIFY(h->isVisible());
        h->setValue(32);
        QCOMPARE(b->spec().input_shape, (hr::Shape{1, 32, 28}));
    }

    void buildSeedCnnLayerByLayer() {
        hrapp::MainWindow w;
        w.setPersistState(false);
        hrw::ModelBuilder* b = w.builder();
        b->resetSpec(hr::ModelSpec{});
        QVERIFY(b->spec().layers.empty());
        QVERIFY(!w.startAction()->isEnabled());  // an empty model cannot start

        const hr::ModelSpec preset = hr::preset_model("seed-cnn");
        std::vector<hr::ModelSpec> states{b->spec()};
        b->setModelName(QString::fromStdString(preset.name));
        states.push_back(b->spec());
        for (const hr::LayerSpec& l : preset.layers) {
            const LayerPath p = b->appendLayer(QString::fromStdString(l.type));
            QVERIFY2(!p.isEmpty(), l.type.c_str());
            states.push_back(b->spec());
            for (auto it = l.attrs.begin(); it != l.attrs.end(); ++it) {
                const double v = it->is_boolean() ? (it->get<bool>() ? 1.0 : 0.0) : it->get<double>();
                QVERIFY(b->setLayerAttr(p, QString::fromStdString(it.key()), v));
                if (!(states.back() == b->spec())) states.push_back(b->spec());
            }
        }
        QVERIFY2(b->spec() == preset, hr::model_spec_to_json(b->spec()).dump().c_str());
        QVERIFY(b->isValid());
        QVERIFY(w.startAction()->isEnabled());
        QCOMPARE(b->report().total_params, hr::analyze_model_spec(preset).total_params);

        // Undo walks back through every state, redo forward again.
        QUndoStack* u = b->undoStack();
        QCOMPARE(u->count() + 1, int(states.size()));
        for (int i = int(states.size()) - 2; i >= 0; --i) {
            u->undo();
            QVERIFY2(b->spec() == states[size_t(i)], qPrintable(QStringLiteral("undo to state %1").arg(i)));
        }
        for (size_t i = 1; i < states.size(); ++i) {
            u->redo();
            QVERIFY2(b->spec() == states[i], qPrintable(QStringLiteral("redo to state %1").arg(i)));
        }
        // The tree shows one row per layer with its output shape.
        QCOMPARE(b->layerTree()->topLevelItemCount(), int(preset.layers.size()));
        QCOMPARE(b->layerTree()->topLevelItem(int(preset.layers.size()) - 1)->text(1), QString::fromStdString(hr::shape_str({10})));
    }

    void structuralEditsUndo() {
        hrapp::MainWindow w;
        w.setPersistState(false);
        hrw::ModelBuilder* b = w.builder();
        b->resetSpec(hr::preset_model("seed-cnn"));
        const hr::ModelSpec original = b->spec();
        QCOMPARE(b->moveLayer({1}, +1), (LayerPath{2}));
        QCOMPARE(b->spec().layers[1].type, std::string("relu"));
        QVERIFY(!b->duplicateLayer({0}).isEmpty());
        QCOMPARE(b->spec().layers.size(), original.layers.size() + 1);
        QVERIFY(b->removeLayer({0}));
        QVERIFY(!b->groupIntoResidual({2}, 1).isEmpty());
        QCOMPARE(b->spec().layers[2].type, std::string("residual"));
        QCOMPARE(b->spec().layers[2].body.size(), size_t(1));
        QVERIFY(!b->moveLayerTo({5}, {}, 0).isEmpty());
        while (b->undoStack()->canUndo()) b->undoStack()->undo();
        QVERIFY(b->spec() == original);
    }

    void invalidPropertyMarksLayerAndDisablesStart() {
        hrapp::MainWindow w;
        w.setPersistState(false);
        hrw::ModelBuilder* b = w.builder();
        b->resetSpec(hr::preset_model("seed-cnn"));
        QVERIFY(b->isValid());
        QVERIFY(w.startAction()->isEnabled());
        int linear = -1;
        for (size_t i = 0; i < b->spec().layers.size(); ++i)
            if (b->spec().layers[i].type == "linear") {
                linear = int(i);
                break;
            }
        QVERIFY(linear >= 0);
        QVERIFY(b->setLayerAttr({linear}, QStringLiteral("in_features"), 321));
        QVERIFY(!b->isValid());
        QVERIFY(!b->layerError({linear}).isEmpty());
        QVERIFY(b->isLayerMarked({linear}));
        QVERIFY(!b->isLayerMarked({0}));
        QVERIFY(!w.startAction()->isEnabled());
        b->undoStack()->undo();
        QVERIFY(b->isValid());
        QVERIFY(!b->isLayerMarked({linear}));
        QVERIFY(w.startAction()->isEnabled());
    }

    void saveOpenRoundTrip() {
        QTemporaryDir dir;
        QVERIFY(dir.isValid());
        hrapp::MainWindow w;
        w.setPersistState(false);
        w.loadPreset(QStringLiteral("resnet-mini"));
        hrw::ModelBuilder* b = w.builder();
        b->setLayerAttr({0}, QStringLiteral("out_channels"), 8);  // a residual model with an edit
        const hr::ModelSpec saved = b->spec();
        const QString path = dir.filePath(QStringLiteral("model.json"));
        QVERIFY(w.saveModel(path));
        QVERIFY(b->undoStack()->isClean());
        b->appendLayer(QStringLiteral("relu"));
        QVERIFY(!(b->spec() == saved));
        QVERIFY(w.openModel(path));
        QVERIFY(b->spec() == saved);
        QCOMPARE(w.currentFile(), path);
        QVERIFY(!b->undoStack()->canUndo());
    }
};

QTEST_MAIN(TestModelBuilder)
#include "test_model_builder.moc"
