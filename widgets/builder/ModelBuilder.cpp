#include "builder/ModelBuilder.h"

#include <QApplication>
#include <QCheckBox>
#include <QComboBox>
#include <QDoubleSpinBox>
#include <QDropEvent>
#include <QEvent>
#include <QFormLayout>
#include <QGroupBox>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QLabel>
#include <QLineEdit>
#include <QSpinBox>
#include <QSplitter>
#include <QStyle>
#include <QToolButton>
#include <QTreeWidget>
#include <QUndoCommand>
#include <QVBoxLayout>

#include <cmath>
#include <map>

#include "text/CoreText.h"

namespace hrw {

namespace {
constexpr int kPathRole = Qt::UserRole + 1;
constexpr int kKindRole = Qt::UserRole + 2;  // 0 layer, 1 shortcut branch header
constexpr int kTypeRole = Qt::UserRole + 3;

QVariant pathToVariant(const LayerPath& p) {
    QVariantList l;
    for (int v : p) l << v;
    return l;
}
LayerPath pathFromVariant(const QVariant& v) {
    LayerPath p;
    for (const QVariant& x : v.toList()) p << x.toInt();
    return p;
}
}  // namespace

// ---- undo ------------------------------------------------------------------------------------------
class SpecCommand : public QUndoCommand {
public:
    SpecCommand(ModelBuilder* b, hr::ModelSpec before, hr::ModelSpec after, const QString& text,
                LayerPath selBefore, LayerPath selAfter, int mergeId, QString mergeKey)
        : QUndoCommand(text), m_b(b), m_before(std::move(before)), m_after(std::move(after)),
          m_selBefore(std::move(selBefore)), m_selAfter(std::move(selAfter)), m_id(mergeId),
          m_key(std::move(mergeKey)) {}
    void undo() override { m_b->applySpec(m_before, m_selBefore); }
    void redo() override { m_b->applySpec(m_after, m_selAfter); }
    int id() const override { return m_id; }
    bool mergeWith(const QUndoCommand* other) override {
        auto* o = static_cast<const SpecCommand*>(other);
        if (o->m_key != m_key || m_key.isEmpty()) return false;
        m_after = o->m_after;
        m_selAfter = o->m_selAfter;
        return true;
    }

private:
    ModelBuilder* m_b;
    hr::ModelSpec m_before, m_after;
    LayerPath m_selBefore, m_selAfter;
    int m_id;
    QString m_key;
};

// ---- the layer tree with drag-to-reorder ------------------------------------------------------------
class LayerTree : public QTreeWidget {
public:
    explicit LayerTree(ModelBuilder* b) : QTreeWidget(b), m_b(b) {
        setDragDropMode(QAbstractItemView::InternalMove);
        setDefaultDropAction(Qt::MoveAction);
        setSelectionMode(QAbstractItemView::SingleSelection);
        setAlternatingRowColors(true);
        setUniformRowHeights(true);
        setRootIsDecorated(true);
        setIndentation(14);
    }

protected:
    void dropEvent(QDropEvent* event) override {
        QTreeWidgetItem* src = currentItem();
        if (!src || src->data(0, kKindRole).toInt() != 0) {
            event->ignore();
            return;
        }
        const LayerPath from = pathFromVariant(src->data(0, kPathRole));
        QTreeWidgetItem* target = itemAt(event->position().toPoint());
        LayerPath parentList;
        int index = int(m_b->spec().layers.size());
        if (target) {
            const LayerPath tp = pathFromVariant(target->data(0, kPathRole));
            const bool header = target->data(0, kKindRole).toInt() == 1;
            const auto pos = dropIndicatorPosition();
            if (header) {  // the shortcut branch header: into that branch
                parentList = tp;
                index = int(layerList(m_b->spec(), tp) ? layerList(m_b->spec(), tp)->size() : 0);
            } else if (pos == QAbstractItemView::OnItem && target->data(0, kTypeRole).toString() == "residual") {
                parentList = tp + LayerPath{BodyBranch};
                index = int(layerList(m_b->spec(), parentList)->size());
            } else {
                parentList = parentListPath(tp);
                index = tp.last() + (pos == QAbstractItemView::BelowItem || pos == QAbstractItemView::OnItem ? 1 : 0);
            }
        }
        event->setDropAction(Qt::IgnoreAction);
        event->accept();
        m_b->moveLayerTo(from, parentList, index);
    }

private:
    ModelBuilder* m_b;
};

// ---- construction ---------------------------------------------------------------------------------
ModelBuilder::ModelBuilder(QWidget* parent) : QWidget(parent), m_undo(new QUndoStack(this)) {
    auto* outer = new QVBoxLayout(this);
    outer->setContentsMargins(4, 4, 4, 4);
    outer->setSpacing(4);

    // Model-level form.
    m_modelBox = new QGroupBox(this);
    auto* mf = new QGridLayout(m_modelBox);
    mf->setContentsMargins(6, 4, 6, 4);
    mf->setHorizontalSpacing(6);
    mf->setVerticalSpacing(3);
    m_nameLabel = new QLabel(m_modelBox);
    m_modelName = new QLineEdit(m_modelBox);
    m_inputLabel = new QLabel(m_modelBox);
    m_inC = new QSpinBox(m_modelBox);
    m_inH = new QSpinBox(m_modelBox);
    m_inW = new QSpinBox(m_modelBox);
    m_inC->setObjectName(QStringLiteral("inputC"));
    m_inH->setObjectName(QStringLiteral("inputH"));
    m_inW->setObjectName(QStringLiteral("inputW"));
    for (QSpinBox* s : {m_inC, m_inH, m_inW}) {
        s->setRange(1, 4096);
        s->setKeyboardTracking(false);
    }
    m_classesLabel = new QLabel(m_modelBox);
    m_classes = new QSpinBox(m_modelBox);
    m_classes->setRange(1, 100000);
    m_classes->setKeyboardTracking(false);
    m_lossLabel = new QLabel(m_modelBox);
    m_loss = new QComboBox(m_modelBox);
    m_loss->addItem(QString(), "cross_entropy");
    m_loss->addItem(QString(), "mse");
    m_smoothing = new QDoubleSpinBox(m_modelBox);
    m_smoothing->setRange(0, 0.99);
    m_smoothing->setSingleStep(0.05);
    m_smoothing->setDecimals(2);
    m_smoothing->setKeyboardTracking(false);
    mf->addWidget(m_nameLabel, 0, 0);
    mf->addWidget(m_modelName, 0, 1, 1, 3);
    mf->addWidget(m_inputLabel, 1, 0);
    auto* shapeRow = new QHBoxLayout;
    shapeRow->setSpacing(3);
    m_times1 = new QLabel(QStringLiteral("×"), m_modelBox);
    m_times2 = new QLabel(QStringLiteral("×"), m_modelBox);
    shapeRow->addWidget(m_inC);
    shapeRow->addWidget(m_times1);
    shapeRow->addWidget(m_inH);
    shapeRow->addWidget(m_times2);
    shapeRow->addWidget(m_inW);
    mf->addLayout(shapeRow, 1, 1, 1, 3);
    mf->addWidget(m_classesLabel, 2, 0);
    mf->addWidget(m_classes, 2, 1);
    mf->addWidget(m_lossLabel, 2, 2);
    auto* lossRow = new QHBoxLayout;
    lossRow->setSpacing(3);
    lossRow->addWidget(m_loss, 1);
    lossRow->addWidget(m_smoothing);
    mf->addLayout(lossRow, 2, 3);
    mf->setColumnStretch(1, 1);
    mf->setColumnStretch(3, 2);
    outer->addWidget(m_modelBox);

    auto* split = new QSplitter(Qt::Vertical, this);
    split->setChildrenCollapsible(false);

    // Palette.
    auto* palW = new QWidget(split);
    auto* palL = new QVBoxLayout(palW);
    palL->setContentsMargins(0, 0, 0, 0);
    palL->setSpacing(2);
    auto* palHead = new QHBoxLayout;
    m_paletteLabel = new QLabel(palW);
    m_search = new QLineEdit(palW);
    m_search->setClearButtonEnabled(true);
    palHead->addWidget(m_paletteLabel);
    palHead->addWidget(m_search, 1);
    palL->addLayout(palHead);
    m_palette = new QTreeWidget(palW);
    m_palette->setHeaderHidden(true);
    m_palette->setRootIsDecorated(true);
    m_palette->setIndentation(12);
    palL->addWidget(m_palette);
    fillPalette();

    // Layers.
    auto* layW = new QWidget(split);
    auto* layL = new QVBoxLayout(layW);
    layL->setContentsMargins(0, 0, 0, 0);
    layL->setSpacing(2);
    auto* bar = new QHBoxLayout;
    bar->setSpacing(2);
    m_layersLabel = new QLabel(layW);
    bar->addWidget(m_layersLabel);
    bar->addStretch(1);
    auto mk = [&](QStyle::StandardPixmap icon) {
        auto* b = new QToolButton(layW);
        if (icon != QStyle::SP_CustomBase) b->setIcon(style()->standardIcon(icon));
        b->setAutoRaise(true);
        b->setToolButtonStyle(icon == QStyle::SP_CustomBase ? Qt::ToolButtonTextOnly : Qt::ToolButtonIconOnly);
        bar->addWidget(b);
        return b;
    };
    m_addButton = mk(QStyle::SP_CustomBase);
    m_insertButton = mk(QStyle::SP_CustomBase);
    m_removeButton = mk(QStyle::SP_TrashIcon);
    m_upButton = mk(QStyle::SP_ArrowUp);
    m_downButton = mk(QStyle::SP_ArrowDown);
    m_duplicateButton = mk(QStyle::SP_FileDialogNewFolder);
    m_groupButton = mk(QStyle::SP_CustomBase);
    layL->addLayout(bar);
    m_tree = new LayerTree(this);
    m_tree->setParent(layW);
    m_tree->setColumnCount(4);
    m_tree->header()->setStretchLastSection(false);
    m_tree->header()->setSectionResizeMode(0, QHeaderView::Stretch);
    for (int c = 1; c < 4; ++c) m_tree->header()->setSectionResizeMode(c, QHeaderView::ResizeToContents);
    layL->addWidget(m_tree, 1);
    m_summary = new QLabel(layW);
    m_summary->setWordWrap(true);
    m_summary->setTextInteractionFlags(Qt::TextSelectableByMouse);
    layL->addWidget(m_summary);
    m_weightsNote = new QLabel(layW);
    m_weightsNote->setObjectName(QStringLiteral("weightsNote"));
    m_weightsNote->setWordWrap(true);
    m_weightsNote->setTextInteractionFlags(Qt::TextSelectableByMouse);
    m_weightsNote->hide();
    layL->addWidget(m_weightsNote);

    // Properties.
    m_propBox = new QGroupBox(split);
    m_propForm = new QFormLayout(m_propBox);
    m_propForm->setContentsMargins(6, 4, 6, 4);
    m_propForm->setVerticalSpacing(3);
    m_propForm->setFieldGrowthPolicy(QFormLayout::AllNonFixedFieldsGrow);

    split->addWidget(palW);
    split->addWidget(layW);
    split->addWidget(m_propBox);
    split->setStretchFactor(0, 2);
    split->setStretchFactor(1, 5);
    split->setStretchFactor(2, 2);
    split->setSizes({150, 380, 170});
    outer->addWidget(split, 1);

    connect(m_search, &QLineEdit::textChanged, this, &ModelBuilder::filterPalette);
    connect(m_palette, &QTreeWidget::itemDoubleClicked, this, [this](QTreeWidgetItem* it) {
        if (it && it->parent()) onAdd();
    });
    connect(m_tree, &QTreeWidget::currentItemChanged, this, [this] {
        rebuildProperties();
        updateActions();
    });
    connect(m_addButton, &QToolButton::clicked, this, &ModelBuilder::onAdd);
    connect(m_insertButton, &QToolButton::clicked, this, &ModelBuilder::onInsert);
    connect(m_removeButton, &QToolButton::clicked, this, [this] { removeLayer(currentPath()); });
    connect(m_upButton, &QToolButton::clicked, this, [this] { moveLayer(currentPath(), -1); });
    connect(m_downButton, &QToolButton::clicked, this, [this] { moveLayer(currentPath(), +1); });
    connect(m_duplicateButton, &QToolButton::clicked, this, [this] { duplicateLayer(currentPath()); });
    connect(m_groupButton, &QToolButton::clicked, this, &ModelBuilder::onGroup);
    connect(m_modelName, &QLineEdit::editingFinished, this, [this] { setModelName(m_modelName->text()); });
    for (QSpinBox* s : {m_inC, m_inH, m_inW})
        connect(s, &QSpinBox::valueChanged, this, [this] {
            if (m_applying) return;
            // the input keeps its rank: (F) for a table or a sequence, (C, H, W) for images
            const std::size_t rank = m_spec.input_shape.size();
            if (rank == 1) setInputShape({m_inC->value()});
            else if (rank == 2) setInputShape({m_inC->value(), m_inH->value()});
            else setInputShape({m_inC->value(), m_inH->value(), m_inW->value()});
        });
    connect(m_classes, &QSpinBox::valueChanged, this, [this](int v) {
        if (!m_applying) setNumClasses(v);
    });
    connect(m_loss, &QComboBox::currentIndexChanged, this, [this] {
        if (!m_applying) setLoss(m_loss->currentData().toString(), m_smoothing->value());
    });
    connect(m_smoothing, &QDoubleSpinBox::valueChanged, this, [this] {
        if (!m_applying) setLoss(m_loss->currentData().toString(), m_smoothing->value());
    });

    retranslateUi();
    hr::ModelSpec empty;
    resetSpec(empty);
}

QTreeWidget* ModelBuilder::layerTree() const { return m_tree; }

void ModelBuilder::setEditable(bool editable) {
    m_editable = editable;
    m_modelBox->setEnabled(editable);
    m_palette->setEnabled(editable);
    m_search->setEnabled(editable);
    m_propBox->setEnabled(editable);
    m_tree->setDragEnabled(editable);
    m_addButton->setEnabled(editable);
    m_insertButton->setEnabled(editable);
    updateActions();
}

QString ModelBuilder::groupTitle(const QString& group) {
    if (group == "convolution") return tr("Convolution");
    if (group == "pooling") return tr("Pooling");
    if (group == "linear") return tr("Linear");
    if (group == "activation") return tr("Activation");
    if (group == "normalisation") return tr("Normalisation");
    if (group == "regularisation") return tr("Regularisation");
    if (group == "structure") return tr("Structure");
    if (group == "loss") return tr("Loss");
    if (group == "embedding") return tr("Embedding");
    if (group == "transformer") return tr("Transformer");
    return group;
}

// The palette's name of a layer type: PyTorch's class names (Conv2d, BatchNorm2d, ...) stay as they are,
// the names in words are translated.
QString ModelBuilder::layerTitle(const hr::LayerTypeInfo& info) {
    const std::string& t = info.type;
    if (t == "residual") return tr("Residual block");
    if (t == "token_embedding") return tr("Token embedding");
    if (t == "position_embedding") return tr("Position embedding");
    if (t == "self_attention") return tr("Self-attention");
    if (t == "transformer_block") return tr("Transformer block");
    if (t == "llama_block") return tr("LLaMA block");
    if (t == "lm_head") return tr("Language-model head");
    if (t == "patch_embedding") return tr("Patch embedding");
    if (t == "class_token") return tr("Class token");
    if (t == "class_token_pool") return tr("Class-token pooling");
    if (t == "cross_entropy") return tr("Softmax cross-entropy");
    return QString::fromStdString(info.display_name);
}

QString ModelBuilder::formatBytes(double b) {
    if (b < 1024) return tr("%1 B").arg(b, 0, 'f', 0);
    if (b < 1024.0 * 1024) return tr("%1 KiB").arg(b / 1024, 0, 'f', 1);
    if (b < 1024.0 * 1024 * 1024) return tr("%1 MiB").arg(b / 1024 / 1024, 0, 'f', 1);
    return tr("%1 GiB").arg(b / 1024 / 1024 / 1024, 0, 'f', 2);
}

QString ModelBuilder::formatCount(double n) {
    if (n < 1000) return QString::number(n, 'f', 0);
    if (n < 1e6) return tr("%1 K").arg(n / 1e3, 0, 'f', 1);
    if (n < 1e9) return tr("%1 M").arg(n / 1e6, 0, 'f', 2);
    return tr("%1 B").arg(n / 1e9, 0, 'f', 2);
}

void ModelBuilder::fillPalette() {
    m_palette->clear();
    std::map<std::string, QTreeWidgetItem*> groups;
    static const char* order[] = {"convolution",   "pooling",        "linear",    "embedding", "transformer",
                                  "activation",    "normalisation", "regularisation", "structure", "loss"};
    for (const char* g : order) {
        auto* it = new QTreeWidgetItem(m_palette, {groupTitle(QString::fromLatin1(g))});
        it->setFlags(Qt::ItemIsEnabled);
        QFont f = it->font(0);
        f.setBold(true);
        it->setFont(0, f);
        groups[g] = it;
    }
    for (const hr::LayerTypeInfo& info : hr::layer_catalog()) {
        QTreeWidgetItem*& g = groups[info.group];
        if (!g) g = new QTreeWidgetItem(m_palette, {groupTitle(QString::fromStdString(info.group))});
        auto* it = new QTreeWidgetItem(g, {layerTitle(info)});
        it->setData(0, kTypeRole, QString::fromStdString(info.type));
        it->setToolTip(0, coreText(info.help));
    }
    for (auto& [name, it] : groups)
        if (it->childCount() == 0) delete it;
    m_palette->expandAll();
}

void ModelBuilder::filterPalette(const QString& text) {
    for (int g = 0; g < m_palette->topLevelItemCount(); ++g) {
        QTreeWidgetItem* group = m_palette->topLevelItem(g);
        int shown = 0;
        for (int i = 0; i < group->childCount(); ++i) {
            QTreeWidgetItem* it = group->child(i);
            const bool match = text.isEmpty() || it->text(0).contains(text, Qt::CaseInsensitive) ||
                               it->data(0, kTypeRole).toString().contains(text, Qt::CaseInsensitive) ||
                               it->toolTip(0).contains(text, Qt::CaseInsensitive) ||
                               group->text(0).contains(text, Qt::CaseInsensitive);
            it->setHidden(!match);
            shown += match ? 1 : 0;
        }
        group->setHidden(shown == 0);
    }
}

QString ModelBuilder::selectedPaletteType() const {
    QTreeWidgetItem* it = m_palette->currentItem();
    if (!it || !it->parent()) return QString();
    return it->data(0, kTypeRole).toString();
}

void ModelBuilder::retranslateUi() {
    m_modelBox->setTitle(tr("Model"));
    m_nameLabel->setText(tr("Name"));
    updateInputLabel();
    m_classesLabel->setText(tr("Classes"));
    m_lossLabel->setText(tr("Loss"));
    m_loss->setItemText(0, tr("Cross-entropy"));
    m_loss->setItemText(1, tr("Mean squared error"));
    m_smoothing->setToolTip(tr("Label smoothing (cross-entropy only)"));
    m_paletteLabel->setText(tr("Layer palette"));
    m_search->setPlaceholderText(tr("Search layers…"));
    m_palette->setToolTip(tr("Double-click a layer type to add it after the selected layer"));
    m_layersLabel->setText(tr("Layers"));
    m_addButton->setText(tr("Add"));
    m_addButton->setToolTip(tr("Add the palette's selected layer after the selected layer"));
    m_insertButton->setText(tr("Insert"));
    m_insertButton->setToolTip(tr("Insert the palette's selected layer before the selected layer"));
    m_removeButton->setToolTip(tr("Remove the selected layer"));
    m_upButton->setToolTip(tr("Move the selected layer up"));
    m_downButton->setToolTip(tr("Move the selected layer down"));
    m_duplicateButton->setToolTip(tr("Duplicate the selected layer"));
    m_groupButton->setText(tr("Residual"));
    m_groupButton->setToolTip(tr("Group the selected layer into a residual block (output = input + block(input))"));
    m_tree->setHeaderLabels({tr("Layer"), tr("Output"), tr("Params"), tr("Act./sample")});
    m_tree->headerItem()->setToolTip(3, tr("Bytes this layer keeps for the backward pass, per sample (fp32)"));
    fillPalette();
    filterPalette(m_search->text());
    if (!m_spec.layers.empty() || m_tree->topLevelItemCount() > 0) rebuildTree(currentPath());
    updateSummary();
    m_propType.clear();
    rebuildProperties();
}

void ModelBuilder::changeEvent(QEvent* event) {
    if (event->type() == QEvent::LanguageChange) retranslateUi();
    QWidget::changeEvent(event);
}

// ---- the model and its edits ------------------------------------------------------------------------
void ModelBuilder::resetSpec(const hr::ModelSpec& spec) {
    m_undo->clear();
    applySpec(spec, m_spec.layers.empty() ? LayerPath{} : LayerPath{});
}

void ModelBuilder::setSpec(const hr::ModelSpec& spec, const QString& actionText) {
    push(spec, actionText, LayerPath{});
}

void ModelBuilder::push(const hr::ModelSpec& after, const QString& text, const LayerPath& select, int mergeId,
                        const QString& mergeKey) {
    if (after == m_spec) return;
    m_undo->push(new SpecCommand(this, m_spec, after, text, currentPath(), select, mergeId, mergeKey));
}

void ModelBuilder::applySpec(const hr::ModelSpec& spec, const LayerPath& select) {
    const bool wasValid = m_report.ok;
    const bool first = m_report.layers.empty() && m_spec.layers.empty();
    m_spec = spec;
    m_report = hr::analyze_model_spec(m_spec);
    m_applying = true;
    updateModelForm();
    rebuildTree(select);
    m_applying = false;
    updateSummary();
    rebuildProperties();
    updateActions();
    emit specChanged();
    if (wasValid != m_report.ok || first) emit validityChanged(m_report.ok);
}

LayerPath ModelBuilder::insertAt(const LayerPath& parentList, int index, hr::LayerSpec layer, const QString& text) {
    hr::ModelSpec s = m_spec;
    auto* list = layerList(s, parentList);
    if (!list) return {};
    index = std::clamp(index, 0, int(list->size()));
    list->insert(list->begin() + index, std::move(layer));
    LayerPath p = parentList;
    p << index;
    push(s, text, p);
    return p;
}

static hr::LayerSpec makeLayer(const QString& type, bool* ok) {
    *ok = hr::find_layer_type(type.toStdString()) != nullptr;
    if (!*ok) return {};
    return hr::default_layer(type.toStdString());
}

LayerPath ModelBuilder::appendLayer(const QString& type) {
    bool ok = false;
    hr::LayerSpec l = makeLayer(type, &ok);
    if (!ok) return {};
    return insertAt({}, int(m_spec.layers.size()), l, tr("Add %1").arg(type));
}

LayerPath ModelBuilder::addLayerAfter(const LayerPath& after, const QString& type) {
    if (after.isEmpty() || !layerAt(m_spec, after)) return appendLayer(type);
    bool ok = false;
    hr::LayerSpec l = makeLayer(type, &ok);
    if (!ok) return {};
    return insertAt(parentListPath(after), after.last() + 1, l, tr("Add %1").arg(type));
}

LayerPath ModelBuilder::insertLayerBefore(const LayerPath& before, const QString& type) {
    bool ok = false;
    hr::LayerSpec l = makeLayer(type, &ok);
    if (!ok) return {};
    if (before.isEmpty() || !layerAt(m_spec, before)) return insertAt({}, 0, l, tr("Insert %1").arg(type));
    return insertAt(parentListPath(before), before.last(), l, tr("Insert %1").arg(type));
}

LayerPath ModelBuilder::addLayerToBranch(const LayerPath& residual, int branch, const QString& type) {
    const hr::LayerSpec* r = layerAt(m_spec, residual);
    if (!r || r->type != "residual") return {};
    bool ok = false;
    hr::LayerSpec l = makeLayer(type, &ok);
    if (!ok) return {};
    const auto& list = branch == ShortcutBranch ? r->shortcut : r->body;
    return insertAt(residual + LayerPath{branch}, int(list.size()), l, tr("Add %1").arg(type));
}

bool ModelBuilder::removeLayer(const LayerPath& path) {
    hr::ModelSpec s = m_spec;
    auto* list = layerList(s, parentListPath(path));
    if (!list || !layerAt(s, path)) return false;
    const QString type = QString::fromStdString(layerAt(s, path)->type);
    list->erase(list->begin() + path.last());
    LayerPath sel = path;
    if (list->empty()) {
        sel = parentListPath(path);
        sel = sel.isEmpty() ? LayerPath{} : parentListPath(sel);
    } else if (sel.last() >= int(list->size())) {
        sel.last() = int(list->size()) - 1;
    }
    push(s, tr("Remove %1").arg(type), sel);
    return true;
}

LayerPath ModelBuilder::moveLayer(const LayerPath& path, int delta) {
    const auto* list = layerList(m_spec, parentListPath(path));
    if (!list || !layerAt(m_spec, path)) return {};
    const int to = path.last() + delta;
    if (to < 0 || to >= int(list->size())) return {};
    hr::ModelSpec s = m_spec;
    auto* l = layerList(s, parentListPath(path));
    std::swap((*l)[size_t(path.last())], (*l)[size_t(to)]);
    LayerPath p = path;
    p.last() = to;
    push(s, delta < 0 ? tr("Move up") : tr("Move down"), p);
    return p;
}

LayerPath ModelBuilder::moveLayerTo(const LayerPath& path, const LayerPath& parentList, int index) {
    if (!layerAt(m_spec, path) || !layerList(m_spec, parentList)) return {};
    // A block cannot move into itself.
    if (parentList.size() >= path.size() && parentList.mid(0, path.size()) == path) return {};
    hr::ModelSpec s = m_spec;
    auto* from = layerList(s, parentListPath(path));
    hr::LayerSpec layer = (*from)[size_t(path.last())];
    // Where the target list and index are once the layer has left its place.
    LayerPath target = parentList;
    const LayerPath fromParent = parentListPath(path);
    if (target.size() > fromParent.size() && target.mid(0, fromParent.size()) == fromParent &&
        target[fromParent.size()] > path.last())
        target[fromParent.size()] -= 1;  // the target lies inside a later sibling
    if (target == fromParent && index > path.last()) index -= 1;
    from->erase(from->begin() + path.last());
    auto* to = layerList(s, target);
    if (!to) return {};
    index = std::clamp(index, 0, int(to->size()));
    to->insert(to->begin() + index, std::move(layer));
    LayerPath p = target;
    p << index;
    if (s == m_spec) return path;
    push(s, tr("Move layer"), p);
    return p;
}

LayerPath ModelBuilder::duplicateLayer(const LayerPath& path) {
    const hr::LayerSpec* l = layerAt(m_spec, path);
    if (!l) return {};
    return insertAt(parentListPath(path), path.last() + 1, *l,
                    tr("Duplicate %1").arg(QString::fromStdString(l->type)));
}

LayerPath ModelBuilder::groupIntoResidual(const LayerPath& first, int count) {
    const auto* list = layerList(m_spec, parentListPath(first));
    if (!list || !layerAt(m_spec, first) || count < 1 || first.last() + count > int(list->size())) return {};
    hr::ModelSpec s = m_spec;
    auto* l = layerList(s, parentListPath(first));
    hr::LayerSpec block = hr::default_layer("residual");
    block.body.assign(l->begin() + first.last(), l->begin() + first.last() + count);
    l->erase(l->begin() + first.last(), l->begin() + first.last() + count);
    l->insert(l->begin() + first.last(), block);
    push(s, tr("Group into residual block"), first);
    return first;
}

bool ModelBuilder::setLayerAttr(const LayerPath& path, const QString& name, double value) {
    const hr::LayerSpec* cur = layerAt(m_spec, path);
    if (!cur) return false;
    const hr::LayerTypeInfo* info = hr::find_layer_type(cur->type);
    hr::AttrInfo::Kind kind = hr::AttrInfo::Kind::real;
    if (info)
        for (const auto& a : info->attrs)
            if (a.name == name.toStdString()) kind = a.kind;
    hr::ModelSpec s = m_spec;
    hr::LayerSpec* l = layerAt(s, path);
    const std::string key = name.toStdString();
    switch (kind) {
        case hr::AttrInfo::Kind::integer: l->attrs[key] = std::int64_t(std::llround(value)); break;
        case hr::AttrInfo::Kind::boolean: l->attrs[key] = value != 0; break;
        default: l->attrs[key] = value; break;
    }
    push(s, tr("Set %1").arg(name), path, 1, layerPathString(path) + QLatin1Char('/') + name);
    return true;
}

bool ModelBuilder::setLayerName(const LayerPath& path, const QString& name) {
    if (!layerAt(m_spec, path)) return false;
    hr::ModelSpec s = m_spec;
    layerAt(s, path)->name = name.toStdString();
    push(s, tr("Rename layer"), path, 1, layerPathString(path) + QStringLiteral("/name"));
    return true;
}

void ModelBuilder::setModelName(const QString& name) {
    hr::ModelSpec s = m_spec;
    s.name = name.toStdString();
    push(s, tr("Rename model"), currentPath());
}

void ModelBuilder::setInputShape(const hr::Shape& shape) {
    hr::ModelSpec s = m_spec;
    s.input_shape = shape;
    push(s, tr("Change input shape"), currentPath(), 1, QStringLiteral("model/input"));
}

void ModelBuilder::setNumClasses(int classes) {
    hr::ModelSpec s = m_spec;
    s.num_classes = classes;
    push(s, tr("Change classes"), currentPath(), 1, QStringLiteral("model/classes"));
}

void ModelBuilder::setLoss(const QString& type, double labelSmoothing) {
    hr::ModelSpec s = m_spec;
    s.loss.type = type.toStdString();
    s.loss.label_smoothing = labelSmoothing;
    push(s, tr("Change loss"), currentPath(), 1, QStringLiteral("model/loss"));
}

void ModelBuilder::onAdd() {
    const QString type = selectedPaletteType();
    if (type.isEmpty()) return;
    QTreeWidgetItem* cur = m_tree->currentItem();
    if (cur && cur->data(0, kKindRole).toInt() == 1) {
        const LayerPath branch = pathFromVariant(cur->data(0, kPathRole));
        addLayerToBranch(branch.mid(0, branch.size() - 1), ShortcutBranch, type);
        return;
    }
    addLayerAfter(currentPath(), type);
}

void ModelBuilder::onInsert() {
    const QString type = selectedPaletteType();
    if (type.isEmpty()) return;
    insertLayerBefore(currentPath(), type);
}

void ModelBuilder::onGroup() {
    const LayerPath p = currentPath();
    if (!p.isEmpty()) groupIntoResidual(p, 1);
}

// ---- the view ---------------------------------------------------------------------------------------
LayerPath ModelBuilder::currentPath() const {
    QTreeWidgetItem* it = m_tree->currentItem();
    if (!it || it->data(0, kKindRole).toInt() != 0) return {};
    return pathFromVariant(it->data(0, kPathRole));
}

QTreeWidgetItem* ModelBuilder::itemForPath(const LayerPath& path) const {
    if (path.isEmpty()) return nullptr;
    QTreeWidgetItemIterator it(m_tree);
    while (*it) {
        if ((*it)->data(0, kKindRole).toInt() == 0 && pathFromVariant((*it)->data(0, kPathRole)) == path) return *it;
        ++it;
    }
    return nullptr;
}

void ModelBuilder::selectPath(const LayerPath& path) {
    if (QTreeWidgetItem* it = itemForPath(path)) m_tree->setCurrentItem(it);
}

QString ModelBuilder::layerErrorText(const hr::LayerReport& r) {
    if (r.error.empty()) return {};
    return r.message.text.empty() ? QString::fromStdString(r.error) : coreText(r.message);
}

QString ModelBuilder::specErrorText(const hr::SpecReport& rep) {
    // error_message is the whole sentence ("layer %1 (%2): ...") as one translatable template
    return rep.error_message.text.empty() ? QString::fromStdString(rep.error) : coreText(rep.error_message);
}

QString ModelBuilder::layerError(const LayerPath& path) const {
    const QString key = layerPathString(path);
    for (const auto& r : m_report.layers)
        if (QString::fromStdString(r.path) == key) return layerErrorText(r);
    return {};
}

bool ModelBuilder::isLayerMarked(const LayerPath& path) const {
    QTreeWidgetItem* it = itemForPath(path);
    return it && it->data(0, Qt::UserRole + 4).toBool();
}

void ModelBuilder::addItems(QTreeWidgetItem* parent, const std::vector<hr::LayerSpec>& list,
                            const LayerPath& parentPath) {
    std::map<QString, const hr::LayerReport*> reports;
    for (const auto& r : m_report.layers) reports[QString::fromStdString(r.path)] = &r;
    for (int i = 0; i < int(list.size()); ++i) {
        const hr::LayerSpec& l = list[size_t(i)];
        LayerPath p = parentPath;
        p << i;
        auto* it = parent ? new QTreeWidgetItem(parent) : new QTreeWidgetItem(m_tree);
        it->setData(0, kPathRole, pathToVariant(p));
        it->setData(0, kKindRole, 0);
        it->setData(0, kTypeRole, QString::fromStdString(l.type));
        it->setFlags(Qt::ItemIsEnabled | Qt::ItemIsSelectable | Qt::ItemIsDragEnabled |
                     (l.type == "residual" ? Qt::ItemIsDropEnabled : Qt::NoItemFlags));
        const auto found = reports.find(layerPathString(p));
        const hr::LayerReport* r = found != reports.end() ? found->second : nullptr;
        QString label = r && !r->label.empty() ? QString::fromStdString(r->label) : QString::fromStdString(l.type);
        if (!l.name.empty()) label = QString::fromStdString(l.name) + QStringLiteral(" · ") + label;
        it->setText(0, label);
        if (r) {
            it->setText(1, r->output_shape.empty() ? QStringLiteral("—") : QString::fromStdString(hr::shape_str(r->output_shape)));
            it->setText(2, r->params ? formatCount(double(r->params)) : QStringLiteral("0"));
            it->setText(3, formatBytes(double(r->activation_bytes_per_sample)));
            for (int c = 2; c < 4; ++c) it->setTextAlignment(c, Qt::AlignRight | Qt::AlignVCenter);
            if (!r->error.empty()) {
                it->setData(0, Qt::UserRole + 4, true);
                it->setIcon(0, style()->standardIcon(QStyle::SP_MessageBoxWarning));
                for (int c = 0; c < 4; ++c) {
                    it->setForeground(c, QColor(0xd0, 0x30, 0x30));
                    it->setToolTip(c, layerErrorText(*r));
                }
            } else {
                it->setToolTip(0, tr("Input %1 → output %2")
                                      .arg(QString::fromStdString(hr::shape_str(r->input_shape)),
                                           QString::fromStdString(hr::shape_str(r->output_shape))));
            }
        }
        if (l.type == "residual") {
            addItems(it, l.body, p + LayerPath{BodyBranch});
            auto* sc = new QTreeWidgetItem(it);
            sc->setData(0, kPathRole, pathToVariant(p + LayerPath{ShortcutBranch}));
            sc->setData(0, kKindRole, 1);
            sc->setFlags(Qt::ItemIsEnabled | Qt::ItemIsSelectable | Qt::ItemIsDropEnabled);
            sc->setText(0, l.shortcut.empty() ? tr("shortcut: identity") : tr("shortcut"));
            QFont f = sc->font(0);
            f.setItalic(true);
            sc->setFont(0, f);
            sc->setToolTip(0, tr("Select and press Add to put a projection on the shortcut"));
            addItems(sc, l.shortcut, p + LayerPath{ShortcutBranch});
            it->setExpanded(true);
            sc->setExpanded(true);
        }
    }
}

void ModelBuilder::rebuildTree(const LayerPath& select) {
    QSignalBlocker block(m_tree);
    m_tree->clear();
    addItems(nullptr, m_spec.layers, {});
    if (QTreeWidgetItem* it = itemForPath(select)) m_tree->setCurrentItem(it);
}

void ModelBuilder::updateInputLabel() {
    // a table's features or a sequence's tokens: one number; images: channels, height and width
    const std::size_t rank = m_spec.input_shape.empty() ? 3 : m_spec.input_shape.size();
    m_inputLabel->setText(rank == 1 ? tr("Input (length)") : rank == 2 ? tr("Input (T×F)") : tr("Input (C×H×W)"));
}

void ModelBuilder::updateModelForm() {
    QSignalBlocker b1(m_inC), b2(m_inH), b3(m_inW), b4(m_classes), b5(m_loss), b6(m_smoothing);
    m_modelName->setText(QString::fromStdString(m_spec.name));
    const hr::Shape& s = m_spec.input_shape;
    m_inC->setValue(s.size() > 0 ? int(s[0]) : 1);
    m_inH->setValue(s.size() > 1 ? int(s[1]) : 1);
    m_inW->setValue(s.size() > 2 ? int(s[2]) : 1);
    const std::size_t rank = s.empty() ? 3 : s.size();
    m_times1->setVisible(rank > 1);
    m_inH->setVisible(rank > 1);
    m_times2->setVisible(rank > 2);
    m_inW->setVisible(rank > 2);
    updateInputLabel();
    m_classes->setValue(m_spec.num_classes);
    m_loss->setCurrentIndex(m_spec.loss.type == "mse" ? 1 : 0);
    m_smoothing->setValue(m_spec.loss.label_smoothing);
    m_smoothing->setEnabled(m_spec.loss.type != "mse");
}

void ModelBuilder::setWeightsNote(const QString& text) {
    m_weightsNote->setText(text);
    m_weightsNote->setVisible(!text.isEmpty());
}

QString ModelBuilder::weightsNote() const { return m_weightsNote->text(); }
QString ModelBuilder::summaryText() const { return m_summary->text(); }

void ModelBuilder::updateSummary() {
    if (m_spec.layers.empty()) {
        m_summary->setStyleSheet(QString());
        m_summary->setText(tr("Empty model: pick a preset from the Model menu or add layers from the palette."));
        return;
    }
    if (!m_report.ok) {
        m_summary->setStyleSheet(QStringLiteral("color: #d03030;"));
        m_summary->setText(tr("Invalid model: %1").arg(specErrorText(m_report)));
        return;
    }
    m_summary->setStyleSheet(QString());
    m_summary->setText(tr("%1 parameters · %2 activations per sample · output %3")
                           .arg(formatCount(double(m_report.total_params)),
                                formatBytes(double(m_report.activation_bytes_per_sample)),
                                QString::fromStdString(hr::shape_str(m_report.output_shape))));
}

void ModelBuilder::updateActions() {
    const LayerPath p = currentPath();
    const bool has = !p.isEmpty() && m_editable;
    const auto* list = has ? layerList(m_spec, parentListPath(p)) : nullptr;
    m_removeButton->setEnabled(has);
    m_duplicateButton->setEnabled(has);
    m_groupButton->setEnabled(has);
    m_upButton->setEnabled(has && p.last() > 0);
    m_downButton->setEnabled(has && list && p.last() + 1 < int(list->size()));
}

void ModelBuilder::rebuildProperties() {
    const LayerPath p = currentPath();
    const hr::LayerSpec* l = layerAt(m_spec, p);
    const QString type = l ? QString::fromStdString(l->type) : QString();
    if (l && m_propHasItem && p == m_propPath && type == m_propType) {
        // Same layer: refresh the values in place so an editor keeps its focus.
        for (QWidget* w : m_propBox->findChildren<QWidget*>()) {
            const QString attr = w->property("hrAttr").toString();
            if (attr.isEmpty()) continue;
            QSignalBlocker b(w);
            const double v = attr == QLatin1String("__name") ? 0 : hr::layer_attr(*l, attr.toStdString());
            if (auto* s = qobject_cast<QSpinBox*>(w)) s->setValue(int(v));
            else if (auto* d = qobject_cast<QDoubleSpinBox*>(w)) d->setValue(v);
            else if (auto* c = qobject_cast<QCheckBox*>(w)) c->setChecked(v != 0);
            else if (auto* e = qobject_cast<QLineEdit*>(w)) {
                if (!e->hasFocus()) e->setText(QString::fromStdString(l->name));
            }
        }
        if (m_propError) {
            const QString err = layerError(p);
            m_propError->setText(err);
            m_propError->setVisible(!err.isEmpty());
        }
        return;
    }
    while (m_propForm->rowCount() > 0) m_propForm->removeRow(0);
    m_propError = nullptr;
    m_propPath = p;
    m_propType = type;
    m_propHasItem = l != nullptr;
    if (!l) {
        m_propBox->setTitle(tr("Properties"));
        auto* hint = new QLabel(tr("Select a layer to edit its properties."), m_propBox);
        hint->setWordWrap(true);
        m_propForm->addRow(hint);
        return;
    }
    const hr::LayerTypeInfo* info = hr::find_layer_type(l->type);
    m_propBox->setTitle(tr("Properties: %1").arg(info ? layerTitle(*info) : type));
    if (info && !info->help.empty()) {
        auto* help = new QLabel(coreText(info->help), m_propBox);
        help->setWordWrap(true);
        QFont f = help->font();
        f.setItalic(true);
        help->setFont(f);
        m_propForm->addRow(help);
    }
    auto* name = new QLineEdit(QString::fromStdString(l->name), m_propBox);
    name->setProperty("hrAttr", QStringLiteral("__name"));
    name->setPlaceholderText(tr("optional label"));
    connect(name, &QLineEdit::editingFinished, this, [this, name, p] {
        const hr::LayerSpec* cur = layerAt(m_spec, p);
        if (cur && QString::fromStdString(cur->name) != name->text()) setLayerName(p, name->text());
    });
    m_propForm->addRow(tr("Label"), name);
    if (info) {
        for (const hr::AttrInfo& a : info->attrs) {
            const QString attr = QString::fromStdString(a.name);
            const double v = hr::layer_attr(*l, a.name);
            QWidget* editor = nullptr;
            if (a.kind == hr::AttrInfo::Kind::integer) {
                auto* s = new QSpinBox(m_propBox);
                s->setRange(int(std::max(-2.0e9, a.min)), int(std::min(2.0e9, a.max)));
                s->setValue(int(v));
                s->setKeyboardTracking(false);
                connect(s, &QSpinBox::valueChanged, this, [this, p, attr](int x) { setLayerAttr(p, attr, x); });
                editor = s;
            } else if (a.kind == hr::AttrInfo::Kind::real) {
                auto* d = new QDoubleSpinBox(m_propBox);
                d->setDecimals(5);
                d->setRange(a.min, a.max);
                d->setSingleStep(a.max <= 1.0 ? 0.05 : 0.1);
                d->setValue(v);
                d->setKeyboardTracking(false);
                connect(d, &QDoubleSpinBox::valueChanged, this, [this, p, attr](double x) { setLayerAttr(p, attr, x); });
                editor = d;
            } else {
                auto* c = new QCheckBox(m_propBox);
                c->setChecked(v != 0);
                connect(c, &QCheckBox::toggled, this, [this, p, attr](bool x) { setLayerAttr(p, attr, x ? 1 : 0); });
                editor = c;
            }
            editor->setProperty("hrAttr", attr);
            editor->setObjectName(QStringLiteral("attr_") + attr);
            editor->setToolTip(coreText(a.help));
            m_propForm->addRow(attr + (a.required ? QStringLiteral(" *") : QString()), editor);
        }
    }
    const QString err = layerError(p);
    m_propError = new QLabel(err, m_propBox);
    m_propError->setWordWrap(true);
    m_propError->setStyleSheet(QStringLiteral("color: #d03030;"));
    m_propError->setVisible(!err.isEmpty());
    m_propForm->addRow(m_propError);
}

}  // namespace hrw
