#pragma once
// ModelBuilder: the model editor. A layer palette grouped by kind (with search), the model as a tree
// of layers and residual blocks (add, insert, remove, move by buttons or drag, duplicate, group into a
// residual block), the model's input/classes/loss, and a property editor for the selected layer.
// Every layer row shows, live, its output shape, parameters and activation bytes per sample from
// hr::analyze_model_spec(); the offending layer of an invalid model is marked. Every edit is a
// QUndoCommand on undoStack(). The builder edits specs only: files are the application's business.
#include <QPointer>
#include <QUndoStack>
#include <QWidget>

#include "builder/LayerPath.h"
#include "nn/model_spec.h"

class QComboBox;
class QDoubleSpinBox;
class QFormLayout;
class QGroupBox;
class QLabel;
class QLineEdit;
class QSpinBox;
class QToolButton;
class QTreeWidget;
class QTreeWidgetItem;

namespace hrw {

class LayerTree;

class ModelBuilder : public QWidget {
    Q_OBJECT
public:
    explicit ModelBuilder(QWidget* parent = nullptr);

    const hr::ModelSpec& spec() const { return m_spec; }
    const hr::SpecReport& report() const { return m_report; }
    bool isValid() const { return m_report.ok; }
    QUndoStack* undoStack() const { return m_undo; }

    // Replaces the model without undo history (New, Open, a preset); clears the undo stack.
    void resetSpec(const hr::ModelSpec& spec);
    // Replaces the model as one undoable edit.
    void setSpec(const hr::ModelSpec& spec, const QString& actionText);

    // Undoable edits. Paths are explained in LayerPath.h. Each returns the path of the affected layer
    // (empty when nothing changed).
    LayerPath appendLayer(const QString& type);                        // at the end of the model
    LayerPath addLayerAfter(const LayerPath& after, const QString& type);
    LayerPath insertLayerBefore(const LayerPath& before, const QString& type);
    LayerPath addLayerToBranch(const LayerPath& residual, int branch, const QString& type);
    bool removeLayer(const LayerPath& path);
    LayerPath moveLayer(const LayerPath& path, int delta);              // -1 up, +1 down
    LayerPath moveLayerTo(const LayerPath& path, const LayerPath& parentList, int index);
    LayerPath duplicateLayer(const LayerPath& path);
    LayerPath groupIntoResidual(const LayerPath& first, int count);     // siblings first..first+count-1
    bool setLayerAttr(const LayerPath& path, const QString& name, double value);
    bool setLayerName(const LayerPath& path, const QString& name);
    void setModelName(const QString& name);
    void setInputShape(const hr::Shape& shape);
    void setNumClasses(int classes);
    void setLoss(const QString& type, double labelSmoothing);

    LayerPath currentPath() const;
    void selectPath(const LayerPath& path);
    QString layerError(const LayerPath& path) const;  // "" when the layer is fine
    bool isLayerMarked(const LayerPath& path) const;  // shown as an error in the tree
    QTreeWidget* layerTree() const;
    // Read-only keeps the layer list browsable (selection, properties shown) but blocks every edit.
    void setEditable(bool editable);
    bool isEditable() const { return m_editable; }
    QTreeWidget* palette() const { return m_palette; }
    // A line under the summary about the weights the model starts from (the application's text; "" hides it).
    void setWeightsNote(const QString& text);
    QString weightsNote() const;
    QString summaryText() const;
    QString selectedPaletteType() const;
    static QString groupTitle(const QString& group);
    static QString layerTitle(const hr::LayerTypeInfo& info);
    static QString formatBytes(double bytes);
    static QString formatCount(double n);
    // A spec analysis error in the UI language ("layer 3 (conv2d): ..." for a layer's error).
    static QString specErrorText(const hr::SpecReport& report);
    static QString layerErrorText(const hr::LayerReport& layer);

signals:
    void specChanged();
    void validityChanged(bool valid);

protected:
    void changeEvent(QEvent* event) override;

private:
    friend class SpecCommand;
    friend class LayerTree;
    void applySpec(const hr::ModelSpec& spec, const LayerPath& select);  // no undo: the commands' hook
    void push(const hr::ModelSpec& after, const QString& text, const LayerPath& select, int mergeId = -1,
              const QString& mergeKey = QString());
    void rebuildTree(const LayerPath& select);
    void addItems(QTreeWidgetItem* parent, const std::vector<hr::LayerSpec>& list, const LayerPath& parentPath);
    QTreeWidgetItem* itemForPath(const LayerPath& path) const;
    void rebuildProperties();
    void updateInputLabel();
    void updateModelForm();
    void updateSummary();
    void updateActions();
    void fillPalette();
    void filterPalette(const QString& text);
    void retranslateUi();
    void onAdd();
    void onInsert();
    void onGroup();
    LayerPath insertAt(const LayerPath& parentList, int index, hr::LayerSpec layer, const QString& text);

    hr::ModelSpec m_spec;
    hr::SpecReport m_report;
    QUndoStack* m_undo = nullptr;
    bool m_applying = false;
    bool m_editable = true;

    QLineEdit* m_search = nullptr;
    QTreeWidget* m_palette = nullptr;
    LayerTree* m_tree = nullptr;
    QGroupBox* m_modelBox = nullptr;
    QLabel* m_nameLabel = nullptr;
    QLabel* m_inputLabel = nullptr;
    QLabel* m_classesLabel = nullptr;
    QLabel* m_lossLabel = nullptr;
    QLineEdit* m_modelName = nullptr;
    QSpinBox* m_inC = nullptr;
    QSpinBox* m_inH = nullptr;
    QSpinBox* m_inW = nullptr;
    QLabel* m_times1 = nullptr;  // the "×" between C and H, H and W: hidden for a 1-D input (a table, tokens)
    QLabel* m_times2 = nullptr;
    QSpinBox* m_classes = nullptr;
    QComboBox* m_loss = nullptr;
    QDoubleSpinBox* m_smoothing = nullptr;
    QToolButton* m_addButton = nullptr;
    QToolButton* m_insertButton = nullptr;
    QToolButton* m_removeButton = nullptr;
    QToolButton* m_upButton = nullptr;
    QToolButton* m_downButton = nullptr;
    QToolButton* m_duplicateButton = nullptr;
    QToolButton* m_groupButton = nullptr;
    QLabel* m_summary = nullptr;
    QLabel* m_weightsNote = nullptr;
    QGroupBox* m_propBox = nullptr;
    QFormLayout* m_propForm = nullptr;
    QLabel* m_paletteLabel = nullptr;
    QLabel* m_layersLabel = nullptr;
    QLabel* m_propError = nullptr;
    LayerPath m_propPath;
    QString m_propType;
    bool m_propHasItem = false;
};

}  // namespace hrw
