#include "gui/DataPanel.h"

#include <QComboBox>
#include <QDir>
#include <QFileDialog>
#include <QFileInfo>
#include <QFormLayout>
#include <QGroupBox>
#include <QHBoxLayout>
#include <QLabel>
#include <QLineEdit>
#include <QPushButton>
#include <QSpinBox>
#include <QVBoxLayout>

#include "data/ImageGrid.h"
#include "data/dataset.h"
#include "data/idx.h"
#include "i18n/CoreText.h"

namespace hrapp {

namespace {
constexpr int kPreview = 16;

QString firstExisting(const QString& dir, const QString& base) {
    for (const QString& name : {base, base + QStringLiteral(".gz")}) {
        const QString p = QDir(dir).filePath(name);
        if (QFileInfo::exists(p)) return p;
    }
    return {};
}
}  // namespace

DataPanel::DataPanel(QWidget* parent) : QWidget(parent) {
    auto* outer = new QVBoxLayout(this);
    outer->setContentsMargins(6, 6, 6, 6);
    auto* form = new QFormLayout;
    form->setFieldGrowthPolicy(QFormLayout::AllNonFixedFieldsGrow);
    m_dataset = new QComboBox(this);
    m_dataset->setObjectName(QStringLiteral("datasetCombo"));
    for (const hr::DatasetInfo& info : hr::known_datasets()) {
        QString spec = QString::fromStdString(info.spec);
        QString label;
        if (spec == QLatin1String("fashion-mnist")) label = tr("Fashion-MNIST");
        else if (spec == QLatin1String("mnist")) label = tr("MNIST");
        else if (spec.startsWith(QLatin1String("idx"))) {
            label = tr("IDX folder");
            spec = QStringLiteral("idx:");
        } else if (spec == QLatin1String("synthetic")) label = tr("Synthetic (generated)");
        else label = spec;
        m_dataset->addItem(label, spec);
    }
    form->addRow(tr("Dataset"), m_dataset);
    auto* pathRow = new QHBoxLayout;
    m_path = new QLineEdit(this);
    m_path->setPlaceholderText(tr("folder with train-images-idx3-ubyte(.gz), …"));
    m_browse = new QPushButton(tr("Browse…"), this);
    pathRow->addWidget(m_path, 1);
    pathRow->addWidget(m_browse);
    form->addRow(tr("Folder"), pathRow);
    m_trainLimit = new QSpinBox(this);
    m_trainLimit->setRange(0, 100000000);
    m_trainLimit->setSpecialValueText(tr("all"));
    m_trainLimit->setSingleStep(1024);
    m_trainLimit->setToolTip(tr("Use only the first N training samples (0: all)"));
    m_testLimit = new QSpinBox(this);
    m_testLimit->setRange(0, 100000000);
    m_testLimit->setSpecialValueText(tr("all"));
    m_testLimit->setSingleStep(1024);
    m_testLimit->setToolTip(tr("Use only the first N test samples (0: all)"));
    form->addRow(tr("Training samples"), m_trainLimit);
    form->addRow(tr("Test samples"), m_testLimit);
    outer->addLayout(form);
    m_description = new QLabel(this);
    m_description->setWordWrap(true);
    outer->addWidget(m_description);
    m_status = new QLabel(this);
    m_status->setWordWrap(true);
    m_status->setObjectName(QStringLiteral("dataStatus"));
    m_status->setTextInteractionFlags(Qt::TextSelectableByMouse);
    outer->addWidget(m_status);
    auto* previewBox = new QGroupBox(tr("Preview (test set)"), this);
    auto* pl = new QVBoxLayout(previewBox);
    m_grid = new hrw::ImageGrid(previewBox);
    pl->addWidget(m_grid);
    outer->addWidget(previewBox);
    outer->addStretch(1);

    connect(m_dataset, &QComboBox::currentIndexChanged, this, [this] {
        refresh();
        emit changed();
    });
    connect(m_path, &QLineEdit::editingFinished, this, [this] {
        refresh();
        emit changed();
    });
    connect(m_browse, &QPushButton::clicked, this, [this] {
        const QString dir = QFileDialog::getExistingDirectory(this, tr("Choose an IDX folder"), m_path->text());
        if (dir.isEmpty()) return;
        const int idx = m_dataset->findData(QStringLiteral("idx:"));
        if (idx >= 0) m_dataset->setCurrentIndex(idx);
        m_path->setText(dir);
        refresh();
        emit changed();
    });
    refresh();
}

QString DataPanel::dataSpec() const {
    const QString base = m_dataset->currentData().toString();
    if (base == QLatin1String("idx:")) return base + m_path->text();
    return base;
}

void DataPanel::setDataSpec(const QString& spec) {
    QSignalBlocker b(m_dataset);
    if (spec.startsWith(QLatin1String("idx:"))) {
        m_dataset->setCurrentIndex(m_dataset->findData(QStringLiteral("idx:")));
        m_path->setText(spec.mid(4));
    } else {
        const int i = m_dataset->findData(spec);
        if (i >= 0) m_dataset->setCurrentIndex(i);
    }
    refresh();
}

void DataPanel::applyTo(hr::TrainConfig& c) const {
    c.data = dataSpec().toStdString();
    c.train_limit = m_trainLimit->value();
    c.test_limit = m_testLimit->value();
}

void DataPanel::setFrom(const hr::TrainConfig& c) {
    m_trainLimit->setValue(int(c.train_limit));
    m_testLimit->setValue(int(c.test_limit));
    setDataSpec(QString::fromStdString(c.data));
}

int DataPanel::previewCount() const { return m_grid->sampleCount(); }

void DataPanel::refresh() {
    const QString base = m_dataset->currentData().toString();
    const bool isIdx = base == QLatin1String("idx:");
    m_path->setReadOnly(!isIdx);
    const QString spec = dataSpec();
    for (const hr::DatasetInfo& info : hr::known_datasets())
        if (QString::fromStdString(info.spec) == base || (isIdx && QString::fromStdString(info.spec).startsWith("idx")))
            m_description->setText(coreText(info.description_message));
    if (isIdx && m_path->text().isEmpty()) {
        m_available = false;
        m_status->setText(tr("Choose a folder holding IDX files."));
        m_grid->setPlaceholder(tr("No preview"));
        return;
    }
    hr::DatasetInfo info;
    try {
        info = hr::probe_dataset(spec.toStdString());
    } catch (const std::exception& e) {
        info.available = false;
        info.detail = e.what();
        const auto* he = dynamic_cast<const hr::Error*>(&e);
        info.detail_message = he ? he->message() : hr::Message::plain(e.what());
    }
    m_available = info.available;
    if (!isIdx) m_path->setText(QString::fromStdString(info.location));
    if (!info.available) {
        m_status->setStyleSheet(QStringLiteral("color: #d03030;"));
        m_status->setText(tr("Not available: %1").arg(coreText(info.detail_message)));
        m_grid->setPlaceholder(tr("No preview"));
        return;
    }
    m_status->setStyleSheet(QString());
    m_status->setText(coreText(info.detail_message));
    loadPreview(QString::fromStdString(info.location), base);
}

void DataPanel::loadPreview(const QString& dir, const QString& base) {
    QVector<QImage> images;
    QStringList labels;
    try {
        if (base == QLatin1String("synthetic")) {
            const hr::Dataset d = hr::make_synthetic("synthetic/test", kPreview, hr::DataOptions{}.synthetic_seed + 1);
            const int h = int(d.sample_shape.at(1)), w = int(d.sample_shape.at(2));
            for (int i = 0; i < int(d.count); ++i) {
                QImage img(d.images.data() + size_t(i) * size_t(d.sample_numel()), w, h, w, QImage::Format_Grayscale8);
                images << img.copy();
                const int label = int(d.labels[size_t(i)]);
                labels << (label < int(d.class_names.size()) ? QString::fromStdString(d.class_names[size_t(label)])
                                                             : QString::number(label));
            }
        } else {
            const QString imgPath = firstExisting(dir, QStringLiteral("t10k-images-idx3-ubyte"));
            const QString labPath = firstExisting(dir, QStringLiteral("t10k-labels-idx1-ubyte"));
            if (imgPath.isEmpty() || labPath.isEmpty()) {
                m_grid->setPlaceholder(tr("No test files to preview in %1").arg(dir));
                return;
            }
            const hr::IdxImages im = hr::read_idx_images(imgPath.toStdString());
            const std::vector<std::int64_t> lab = hr::read_idx_labels(labPath.toStdString(), 256);
            const auto& names = hr::fashion_mnist_class_names();
            const bool fashion = base == QLatin1String("fashion-mnist");
            for (int i = 0; i < kPreview && i < int(im.count); ++i) {
                QImage img(im.pixels.data() + size_t(i) * size_t(im.rows * im.cols), int(im.cols), int(im.rows),
                           int(im.cols), QImage::Format_Grayscale8);
                images << img.copy();
                const int l = int(lab[size_t(i)]);
                labels << (fashion && l < int(names.size()) ? QString::fromStdString(names[size_t(l)]) : QString::number(l));
            }
        }
    } catch (const std::exception& e) {
        m_grid->setPlaceholder(tr("Preview failed: %1").arg(coreText(e)));
        return;
    }
    m_grid->setSamples(images, labels);
}

}  // namespace hrapp
