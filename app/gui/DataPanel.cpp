#include "gui/DataPanel.h"

#include <QComboBox>
#include <QDir>
#include <QFile>
#include <QFileDialog>
#include <QFileInfo>
#include <QFormLayout>
#include <QGroupBox>
#include <QHBoxLayout>
#include <QLabel>
#include <QLineEdit>
#include <QPlainTextEdit>
#include <QPushButton>
#include <QSignalBlocker>
#include <QSpinBox>
#include <QVBoxLayout>

#include "data/ImageGrid.h"
#include "data/cifar.h"
#include "data/dataset.h"
#include "data/idx.h"
#include "data/table.h"
#include "data/chat_template.h"
#include "data/instruct_data.h"
#include "data/text_data.h"
#include "data/tokenizer.h"
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
        else if (spec == QLatin1String("cifar10")) label = tr("CIFAR-10");
        else if (spec.startsWith(QLatin1String("cifar10:"))) {
            label = tr("CIFAR-10 folder");
            spec = QStringLiteral("cifar10:");
        } else if (spec.startsWith(QLatin1String("csv:"))) {
            label = tr("CSV table");
            spec = QStringLiteral("csv:");
        } else if (spec.startsWith(QLatin1String("tsv:"))) {
            label = tr("TSV table");
            spec = QStringLiteral("tsv:");
        } else label = spec;
        m_dataset->addItem(label, spec);
    }
    // text for language models (core/data/text_data.h)
    m_dataset->addItem(tr("Fortunes (text)"), QStringLiteral("text:fortunes"));
    m_dataset->addItem(tr("Text file (UTF-8)"), QStringLiteral("text:"));
    // instruction rows (core/data/instruct_data.h): the loss only on the answers
    m_dataset->addItem(tr("Instruction rows (JSONL or JSON)"), QStringLiteral("jsonl:"));
    form->addRow(tr("Dataset"), m_dataset);
    auto* pathRow = new QHBoxLayout;
    m_path = new QLineEdit(this);
    m_path->setObjectName(QStringLiteral("dataPath"));
    m_path->setPlaceholderText(tr("folder with train-images-idx3-ubyte(.gz), …"));
    m_browse = new QPushButton(tr("Browse…"), this);
    pathRow->addWidget(m_path, 1);
    pathRow->addWidget(m_browse);
    m_pathLabel = new QLabel(tr("Folder"), this);
    form->addRow(m_pathLabel, pathRow);
    // a table's class column (--target): its header's names, the last one until another is chosen
    m_target = new QComboBox(this);
    m_target->setObjectName(QStringLiteral("targetCombo"));
    m_target->setEditable(true);
    m_target->setToolTip(tr("The column to predict (a class); every other column must hold numbers"));
    m_targetLabel = new QLabel(tr("Class column"), this);
    form->addRow(m_targetLabel, m_target);
    // a language model's tokens: bytes, the text's characters, or a SentencePiece BPE trained on it
    auto* tokenRow = new QHBoxLayout;
    m_tokenizer = new QComboBox(this);
    m_tokenizer->setObjectName(QStringLiteral("tokenizerCombo"));
    m_tokenizer->addItem(tr("Bytes (256)"), QStringLiteral("byte"));
    m_tokenizer->addItem(tr("Characters of the text"), QStringLiteral("char"));
    m_tokenizer->addItem(tr("BPE (SentencePiece)"), QStringLiteral("bpe"));
    m_tokenizer->addItem(tr("A model's tokenizer file"), QStringLiteral("file"));
    m_tokenizerFile = new QLineEdit(this);
    m_tokenizerFile->setObjectName(QStringLiteral("tokenizerFile"));
    m_tokenizerFile->setPlaceholderText(tr("tokenizer.json or tokenizer.model, or its model folder"));
    m_tokenizerBrowse = new QPushButton(tr("Browse…"), this);
    m_bpeSize = new QSpinBox(this);
    m_bpeSize->setObjectName(QStringLiteral("bpeSize"));
    m_bpeSize->setRange(260, 1000000);
    m_bpeSize->setValue(4096);
    m_bpeSize->setSuffix(tr(" tokens"));
    m_bpeSize->setToolTip(tr("The BPE vocabulary, trained on the training text before the run"));
    tokenRow->addWidget(m_tokenizer, 1);
    tokenRow->addWidget(m_bpeSize);
    tokenRow->addWidget(m_tokenizerFile, 2);
    tokenRow->addWidget(m_tokenizerBrowse);
    m_tokenizerLabel = new QLabel(tr("Tokens"), this);
    form->addRow(m_tokenizerLabel, tokenRow);
    // instruction rows: the chat template and how rows become sequences (--chat-template, --sequences)
    m_chatTemplate = new QComboBox(this);
    m_chatTemplate->setObjectName(QStringLiteral("chatTemplateCombo"));
    m_chatTemplate->addItem(tr("From the tokenizer"), QStringLiteral("auto"));
    m_chatTemplate->addItem(tr("Llama 3"), QStringLiteral("llama3"));
    m_chatTemplate->addItem(tr("ChatML (Qwen)"), QStringLiteral("chatml"));
    m_chatTemplate->addItem(tr("Mistral [INST]"), QStringLiteral("mistral"));
    m_chatTemplate->addItem(tr("Plain (the texts only)"), QStringLiteral("plain"));
    m_chatTemplate->setToolTip(tr("How a conversation is written for the model; the loss is taken on the answers only"));
    m_chatTemplateLabel = new QLabel(tr("Chat template"), this);
    form->addRow(m_chatTemplateLabel, m_chatTemplate);
    m_sequences = new QComboBox(this);
    m_sequences->setObjectName(QStringLiteral("sequencesCombo"));
    m_sequences->addItem(tr("Padded: one row a sequence"), QStringLiteral("pad"));
    m_sequences->addItem(tr("Packed: rows joined"), QStringLiteral("pack"));
    m_sequencesLabel = new QLabel(tr("Sequences"), this);
    form->addRow(m_sequencesLabel, m_sequences);
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
    m_trainLimitLabel = new QLabel(tr("Training samples"), this);
    m_testLimitLabel = new QLabel(tr("Test samples"), this);
    form->addRow(m_trainLimitLabel, m_trainLimit);
    form->addRow(m_testLimitLabel, m_testLimit);
    outer->addLayout(form);
    m_description = new QLabel(this);
    m_description->setWordWrap(true);
    outer->addWidget(m_description);
    m_status = new QLabel(this);
    m_status->setWordWrap(true);
    m_status->setObjectName(QStringLiteral("dataStatus"));
    m_status->setTextInteractionFlags(Qt::TextSelectableByMouse);
    outer->addWidget(m_status);
    m_tokenStats = new QLabel(this);
    m_tokenStats->setWordWrap(true);
    m_tokenStats->setObjectName(QStringLiteral("instructionTokens"));
    m_tokenStats->setTextInteractionFlags(Qt::TextSelectableByMouse);
    m_tokenStats->setVisible(false);
    outer->addWidget(m_tokenStats);
    m_previewBox = new QGroupBox(tr("Preview (test set)"), this);
    auto* pl = new QVBoxLayout(m_previewBox);
    m_grid = new hrw::ImageGrid(m_previewBox);
    pl->addWidget(m_grid);
    m_textPreview = new QPlainTextEdit(m_previewBox);
    m_textPreview->setObjectName(QStringLiteral("textPreview"));
    m_textPreview->setReadOnly(true);
    m_textPreview->setMinimumHeight(160);
    pl->addWidget(m_textPreview);
    outer->addWidget(m_previewBox);
    outer->addStretch(1);

    connect(m_dataset, &QComboBox::currentIndexChanged, this, [this] {
        refresh();
        emit changed();
    });
    connect(m_path, &QLineEdit::editingFinished, this, [this] {
        refresh();
        emit changed();
    });
    connect(m_target, &QComboBox::currentTextChanged, this, [this] {
        if (m_fillingTargets) return;
        refresh();
        emit changed();
    });
    connect(m_tokenizer, &QComboBox::currentIndexChanged, this, [this] {
        updateTokenizerFields();
        emit changed();
    });
    connect(m_bpeSize, &QSpinBox::valueChanged, this, &DataPanel::changed);
    connect(m_tokenizerFile, &QLineEdit::editingFinished, this, [this] {
        refresh();
        emit changed();
    });
    connect(m_tokenizerBrowse, &QPushButton::clicked, this, [this] {
        const QString file = QFileDialog::getOpenFileName(this, tr("Choose a tokenizer file"), m_tokenizerFile->text(),
                                                          tr("Tokenizers (tokenizer.json tokenizer.model *.json *.model);;All files (*)"));
        if (file.isEmpty()) return;
        m_tokenizerFile->setText(file);
        refresh();
        emit changed();
    });
    for (QComboBox* box : {m_chatTemplate, m_sequences})
        connect(box, &QComboBox::currentIndexChanged, this, [this] {
            m_previewSpec.clear();
            refresh();
            emit changed();
        });
    connect(m_browse, &QPushButton::clicked, this, [this] {
        if (m_dataset->currentData().toString() == QLatin1String("jsonl:")) {
            const QString file = QFileDialog::getOpenFileName(this, tr("Choose instruction rows"), m_path->text(),
                                                              tr("Instruction rows (*.jsonl *.json);;All files (*)"));
            if (file.isEmpty()) return;
            m_path->setText(file);
            refresh();
            emit changed();
            return;
        }
        if (m_dataset->currentData().toString() == QLatin1String("text:")) {
            const QString file = QFileDialog::getOpenFileName(this, tr("Choose a text file"), m_path->text(),
                                                              tr("Text (*.txt *.md);;All files (*)"));
            if (file.isEmpty()) return;
            m_path->setText(file);
            refresh();
            emit changed();
            return;
        }
        if (isTable()) {
            const QString file = QFileDialog::getOpenFileName(this, tr("Choose a table"), m_path->text(),
                                                              tr("Tables (*.csv *.tsv *.txt);;All files (*)"));
            if (file.isEmpty()) return;
            m_path->setText(file);
            refresh();
            emit changed();
            return;
        }
        const bool cifar = m_dataset->currentData().toString().startsWith(QLatin1String("cifar10"));
        const QString dir = QFileDialog::getExistingDirectory(
            this, cifar ? tr("Choose the cifar-10-batches-bin folder") : tr("Choose an IDX folder"), m_path->text());
        if (dir.isEmpty()) return;
        const int idx = m_dataset->findData(cifar ? QStringLiteral("cifar10:") : QStringLiteral("idx:"));
        if (idx >= 0) m_dataset->setCurrentIndex(idx);
        m_path->setText(dir);
        refresh();
        emit changed();
    });
    refresh();
}

QString DataPanel::dataSpec() const {
    const QString base = m_dataset->currentData().toString();
    if (base.endsWith(QLatin1Char(':'))) return base + m_path->text();  // idx:, cifar10:, csv:, tsv:, text:
    return base;
}

bool DataPanel::isTable() const {
    const QString base = m_dataset->currentData().toString();
    return base == QLatin1String("csv:") || base == QLatin1String("tsv:");
}

QString DataPanel::target() const { return isTable() ? m_target->currentText().trimmed() : QString(); }

bool DataPanel::isText() const {
    const QString base = m_dataset->currentData().toString();
    return base.startsWith(QLatin1String("text:")) || base == QLatin1String("jsonl:");
}

bool DataPanel::isInstructions() const { return m_dataset->currentData().toString() == QLatin1String("jsonl:"); }

QString DataPanel::tokenizerSpec() const {
    const QString kind = m_tokenizer->currentData().toString();
    if (kind == QLatin1String("file")) return m_tokenizerFile->text().trimmed();
    return kind == QLatin1String("bpe") ? QStringLiteral("bpe:%1").arg(m_bpeSize->value()) : kind;
}

void DataPanel::setTokenizerSpec(const QString& spec) {
    const QSignalBlocker b(m_tokenizer);
    if (spec.startsWith(QLatin1String("bpe:"))) {
        m_tokenizer->setCurrentIndex(m_tokenizer->findData(QStringLiteral("bpe")));
        m_bpeSize->setValue(spec.mid(4).toInt());
    } else if (spec != QLatin1String("byte") && spec != QLatin1String("char") && !spec.isEmpty()) {
        m_tokenizer->setCurrentIndex(m_tokenizer->findData(QStringLiteral("file")));
        m_tokenizerFile->setText(spec);
    } else {
        const int i = m_tokenizer->findData(spec);
        m_tokenizer->setCurrentIndex(i >= 0 ? i : 0);
    }
    updateTokenizerFields();
}

void DataPanel::updateTokenizerFields() {
    const QString kind = m_tokenizer->currentData().toString();
    m_bpeSize->setVisible(isText() && kind == QLatin1String("bpe"));
    m_tokenizerFile->setVisible(isText() && kind == QLatin1String("file"));
    m_tokenizerBrowse->setVisible(isText() && kind == QLatin1String("file"));
    for (QWidget* w : {static_cast<QWidget*>(m_chatTemplate), static_cast<QWidget*>(m_chatTemplateLabel),
                       static_cast<QWidget*>(m_sequences), static_cast<QWidget*>(m_sequencesLabel)})
        w->setVisible(isInstructions());
}

void DataPanel::setDataSpec(const QString& spec) {
    QSignalBlocker b(m_dataset);
    if (spec.startsWith(QLatin1String("idx:")) || spec.startsWith(QLatin1String("csv:")) ||
        spec.startsWith(QLatin1String("tsv:")) || spec.startsWith(QLatin1String("cifar10:"))) {
        const int colon = int(spec.indexOf(QLatin1Char(':')));
        m_dataset->setCurrentIndex(m_dataset->findData(spec.left(colon + 1)));
        m_path->setText(spec.mid(colon + 1));
    } else if (spec.startsWith(QLatin1String("text:")) && spec != QLatin1String("text:fortunes")) {
        m_dataset->setCurrentIndex(m_dataset->findData(QStringLiteral("text:")));
        m_path->setText(spec.mid(5));
    } else if (spec.startsWith(QLatin1String("jsonl:"))) {
        m_dataset->setCurrentIndex(m_dataset->findData(QStringLiteral("jsonl:")));
        m_path->setText(spec.mid(6));
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
    c.target = target().toStdString();
    if (isText()) c.tokenizer = tokenizerSpec().toStdString();
    if (isInstructions()) {
        c.chat_template = m_chatTemplate->currentData().toString().toStdString();
        c.sequences = m_sequences->currentData().toString().toStdString();
    }
}

void DataPanel::setFrom(const hr::TrainConfig& c) {
    m_trainLimit->setValue(int(c.train_limit));
    m_testLimit->setValue(int(c.test_limit));
    m_wantedTarget = QString::fromStdString(c.target);
    setDataSpec(QString::fromStdString(c.data));
    setTokenizerSpec(QString::fromStdString(c.tokenizer));
    {
        const QSignalBlocker b1(m_chatTemplate), b2(m_sequences);
        const int t = m_chatTemplate->findData(QString::fromStdString(c.chat_template));
        m_chatTemplate->setCurrentIndex(t >= 0 ? t : 0);
        const int s = m_sequences->findData(QString::fromStdString(c.sequences));
        m_sequences->setCurrentIndex(s >= 0 ? s : 0);
    }
    m_previewSpec.clear();
    refresh();
}

void DataPanel::fillTargets() {
    // the table's columns; the chosen one stays when the file still has it, else the wanted one
    // (setFrom), else the last column (where tables usually keep their class)
    const QString spec = dataSpec();
    if (spec == m_targetsFor) return;
    m_targetsFor = spec;
    std::vector<std::string> columns;
    try {
        columns = hr::read_table_columns(spec.toStdString());
    } catch (const std::exception&) {
        // the probe says what is wrong with the file
    }
    const QString keep = !m_wantedTarget.isEmpty() ? m_wantedTarget : m_target->currentText();
    m_wantedTarget.clear();
    m_fillingTargets = true;
    m_target->clear();
    for (const std::string& c : columns) m_target->addItem(QString::fromStdString(c));
    const int i = m_target->findText(keep);
    if (i >= 0) m_target->setCurrentIndex(i);
    else if (!keep.isEmpty() && columns.empty()) m_target->setEditText(keep);
    else if (!columns.empty()) m_target->setCurrentIndex(int(columns.size()) - 1);
    m_fillingTargets = false;
}

int DataPanel::previewCount() const { return m_grid->sampleCount(); }

void DataPanel::setSequenceLength(qint64 seq) {
    if (seq == m_seq) return;
    m_seq = seq;
    if (isInstructions()) {
        m_previewSpec.clear();
        refresh();
    }
}

void DataPanel::refresh() {
    m_tokenStats->setVisible(isInstructions());
    const QString base = m_dataset->currentData().toString();
    const bool isIdx = base == QLatin1String("idx:");
    const bool isFile = base == QLatin1String("text:") || base == QLatin1String("jsonl:");
    if (isText()) {
        refreshText(isFile);
        return;
    }
    const bool table = isTable();
    const bool cifarDir = base == QLatin1String("cifar10:");
    const bool chosen = isIdx || cifarDir || table;  // a folder or file the person names
    showTextFields(false);
    m_target->setVisible(table);
    m_targetLabel->setVisible(table);
    m_grid->setVisible(!table);
    m_textPreview->setVisible(table);
    m_previewBox->setTitle(table ? tr("Preview (the table's first rows)") : tr("Preview (test set)"));
    m_pathLabel->setText(table ? tr("File") : tr("Folder"));
    m_path->setPlaceholderText(table ? tr("a CSV or TSV file with a header row")
                               : cifarDir || base == QLatin1String("cifar10")
                                   ? tr("the cifar-10-batches-bin folder (data_batch_1.bin, …, test_batch.bin)")
                                   : tr("folder with train-images-idx3-ubyte(.gz), …"));
    m_path->setReadOnly(!chosen);
    m_browse->setEnabled(true);
    const QString spec = dataSpec();
    for (const hr::DatasetInfo& info : hr::known_datasets()) {
        const QString known = QString::fromStdString(info.spec);
        if (known == base || (base.endsWith(QLatin1Char(':')) && known.startsWith(base)))
            m_description->setText(coreText(info.description_message));
    }
    if (chosen && m_path->text().isEmpty()) {
        m_available = false;
        m_status->setStyleSheet(QString());
        m_status->setText(table ? tr("Choose a table file.") : cifarDir ? tr("Choose the CIFAR-10 folder.")
                                                                         : tr("Choose a folder holding IDX files."));
        m_grid->setPlaceholder(tr("No preview"));
        m_textPreview->clear();
        return;
    }
    if (table) fillTargets();
    hr::DatasetInfo info;
    try {
        info = hr::probe_dataset(spec.toStdString(), target().toStdString());
    } catch (const std::exception& e) {
        info.available = false;
        info.detail = e.what();
        const auto* he = dynamic_cast<const hr::Error*>(&e);
        info.detail_message = he ? he->message() : hr::Message::plain(e.what());
    }
    m_available = info.available;
    if (!chosen) m_path->setText(QString::fromStdString(info.location));
    if (table) showTableHead(m_path->text());
    if (!info.available) {
        m_status->setStyleSheet(QStringLiteral("color: #d03030;"));
        m_status->setText(tr("Not available: %1").arg(coreText(info.detail_message)));
        m_grid->setPlaceholder(tr("No preview"));
        return;
    }
    m_status->setStyleSheet(QString());
    m_status->setText(coreText(info.detail_message));
    if (!table) loadPreview(QString::fromStdString(info.location), base);
}

void DataPanel::showTableHead(const QString& path) {
    // the file as it is, its first rows: what the columns hold
    QFile f(path);
    if (!f.open(QIODevice::ReadOnly)) {
        m_textPreview->clear();
        return;
    }
    m_previewSpec.clear();  // the text preview no longer shows a text's validation split
    QStringList lines;
    while (lines.size() < 20 && !f.atEnd()) lines << QString::fromUtf8(f.readLine(4096)).trimmed();
    m_textPreview->setPlainText(lines.join(QLatin1Char('\n')));
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
        } else if (base.startsWith(QLatin1String("cifar10"))) {
            // the first records of the test batch: a label byte, then the red, green and blue 32x32 planes
            hr::Dataset d;
            hr::read_cifar_batch(QDir(dir).filePath(QStringLiteral("test_batch.bin")).toStdString(), d);
            const auto& names = hr::cifar10_class_names();
            for (int i = 0; i < kPreview && i < int(d.count); ++i) {
                QImage img(32, 32, QImage::Format_RGB888);
                const std::uint8_t* px = d.images.data() + size_t(i) * size_t(hr::kCifarImageBytes);
                for (int y = 0; y < 32; ++y)
                    for (int x = 0; x < 32; ++x)
                        img.setPixel(x, y, qRgb(px[y * 32 + x], px[1024 + y * 32 + x], px[2048 + y * 32 + x]));
                images << img;
                const int l = int(d.labels[size_t(i)]);
                labels << (l < int(names.size()) ? QString::fromStdString(names[size_t(l)]) : QString::number(l));
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

namespace hrapp {

void DataPanel::showTextFields(bool text) {
    if (text) {
        m_target->setVisible(false);
        m_targetLabel->setVisible(false);
    }
    m_tokenizer->setVisible(text);
    m_tokenizerLabel->setVisible(text);
    updateTokenizerFields();
    // a text's split is fixed (core/data/text_data.h); the sample limits are the image datasets'
    for (QWidget* w : {static_cast<QWidget*>(m_trainLimit), static_cast<QWidget*>(m_testLimit),
                       static_cast<QWidget*>(m_trainLimitLabel), static_cast<QWidget*>(m_testLimitLabel)})
        w->setVisible(!text);
    m_grid->setVisible(!text);
    m_textPreview->setVisible(text);
    m_previewBox->setTitle(text ? tr("Preview (validation text)") : tr("Preview (test set)"));
}

void DataPanel::refreshText(bool isFile) {
    showTextFields(true);
    m_pathLabel->setText(isFile ? tr("File") : tr("Folder"));
    m_path->setPlaceholderText(isInstructions() ? tr("a .jsonl or .json file: prompt/completion, messages, Alpaca or ShareGPT rows")
                               : isFile         ? tr("a UTF-8 text file")
                                                : QString());
    m_path->setReadOnly(!isFile);
    m_browse->setEnabled(isFile);
    if (isInstructions()) {
        refreshInstructions();
        return;
    }
    // a built-in corpus (text:fortunes reads hundreds of files) is probed once: its files do not change while
    // the window is open, and settings applied again (a model folder opened) must not read it again
    const std::string spec = dataSpec().toStdString();
    if (isFile || spec != m_probedSpec) {
        m_probed = hr::probe_text_data(spec);
        m_probedSpec = isFile ? std::string() : spec;
    }
    const hr::DatasetInfo info = m_probed;
    m_description->setText(coreText(info.description_message));
    m_available = info.available;
    if (!isFile) m_path->setText(QString::fromStdString(info.location));
    if (!info.available) {
        m_textPreview->clear();
        m_previewSpec.clear();
        m_status->setStyleSheet(QStringLiteral("color: #d03030;"));
        m_status->setText(tr("Not available: %1").arg(coreText(info.detail_message)));
        return;
    }
    m_status->setStyleSheet(QString());
    m_status->setText(coreText(info.detail_message));
    if (m_previewSpec == dataSpec()) return;  // already shown: the corpus is read once per choice, not per refresh
    m_textPreview->clear();
    try {
        // the validation split's first characters: what the run reports its loss on
        const hr::TextCorpus corpus = hr::load_text_corpus(dataSpec().toStdString());
        constexpr int kPreviewChars = 2000;
        m_textPreview->setPlainText(QString::fromUtf8(corpus.validation_text.data(),
                                                      int(std::min<std::size_t>(corpus.validation_text.size(), kPreviewChars))));
        m_previewSpec = dataSpec();
    } catch (const std::exception& e) {
        m_available = false;
        m_status->setStyleSheet(QStringLiteral("color: #d03030;"));
        m_status->setText(tr("Not available: %1").arg(coreText(e)));
    }
}

// Instruction rows: the file's rows counted and the first ones as the chosen template writes them, the
// loss's part marked; each row's tokens (the run's tokenizer) against the sequence length, how many rows
// are cut (padded sequences) or how many sequences they pack into, and the longest row (read once per
// file, template, tokenizer, layout and sequence length).
void DataPanel::refreshInstructions() {
    m_description->setText(tr("Prompts and answers, or conversations: the loss only on the answers"));
    m_previewBox->setTitle(tr("Preview (the first training rows)"));
    const QString layout = m_sequences->currentData().toString();
    const QString key = dataSpec() + QLatin1Char('|') + m_chatTemplate->currentData().toString() + QLatin1Char('|') +
                        tokenizerSpec() + QLatin1Char('|') + layout + QLatin1Char('|') + QString::number(m_seq);
    if (m_path->text().trimmed().isEmpty()) {
        m_available = false;
        m_status->setStyleSheet(QString());
        m_status->setText(tr("Choose a JSONL file."));
        m_tokenStats->clear();
        m_textPreview->clear();
        m_previewSpec.clear();
        return;
    }
    if (m_previewSpec == key) return;
    m_textPreview->clear();
    m_tokenStats->clear();
    try {
        const hr::InstructRows rows = hr::load_instruct_rows(dataSpec().toStdString());
        std::string tmpl = m_chatTemplate->currentData().toString().toStdString();
        const std::string tokSpec = tokenizerSpec().toStdString();
        // the run's tokenizer: a model's file as it is, bytes, or the characters of these rows; a BPE is
        // trained when the run starts (counting with it here would train it on every change)
        std::unique_ptr<hr::Tokenizer> tok;
        if (tokSpec.rfind("bpe", 0) != 0) tok = hr::make_tokenizer(tokSpec, rows.all_text());
        QString from;
        if (tmpl == "auto") {
            tmpl = tok ? hr::resolve_chat_template(tmpl, *tok) : std::string("plain");
            from = tr(" (from the tokenizer)");
        }
        auto rowName = [](const hr::InstructRow& r) {
            return r.element > 0 ? tr("element %1 (line %2)").arg(r.element).arg(r.line) : tr("line %1").arg(r.line);
        };
        auto countTokens = [&](const hr::InstructRow& r) {
            std::vector<std::int32_t> ids;
            std::vector<unsigned char> trained;
            hr::encode_chat(hr::render_chat(tmpl, r.messages), *tok, ids, trained);
            return qint64(ids.size());
        };
        const qint64 seq = m_seq;
        QString preview;
        for (std::size_t i = 0; i < rows.train.size() && i < 3; ++i) {
            if (tok) {
                const qint64 n = countTokens(rows.train[i]);
                // a padded sequence reads seq tokens and the target after them (core/data/instruct_data.h)
                preview += seq <= 0           ? tr("── %1: %2 tokens ──").arg(rowName(rows.train[i])).arg(n)
                           : n > seq + 1      ? tr("── %1: %2 tokens of %3: cut, the last %4 not read ──")
                                                    .arg(rowName(rows.train[i]))
                                                    .arg(n)
                                                    .arg(seq)
                                                    .arg(n - seq - 1)
                                              : tr("── %1: %2 tokens of %3 ──").arg(rowName(rows.train[i])).arg(n).arg(seq);
                preview += QLatin1Char('\n');
            }
            // the loss's part between ⟦ and ⟧
            for (const hr::ChatPart& part : hr::render_chat(tmpl, rows.train[i].messages))
                preview += part.trained ? QStringLiteral("⟦%1⟧").arg(QString::fromStdString(part.text))
                                        : QString::fromStdString(part.text);
            preview += QStringLiteral("\n\n");
        }
        m_textPreview->setPlainText(preview);
        m_available = true;
        m_status->setStyleSheet(QString());
        const QString layoutName = QString::fromLatin1(hr::instruct_layout_name(rows.layout));
        m_status->setText((rows.json_array ? tr("%1 training and %2 validation rows (a JSON array, %5 layout); %3 "
                                                "template%4; the loss on the text in ⟦ ⟧")
                                           : tr("%1 training and %2 validation rows (%5 layout); %3 template%4; the "
                                                "loss on the text in ⟦ ⟧"))
                              .arg(rows.train.size())
                              .arg(rows.validation.size())
                              .arg(QString::fromStdString(tmpl), from, layoutName));
        if (!tok) {
            m_tokenStats->setText(tr("Token counts: the BPE is trained on these rows when the run starts; choose "
                                     "bytes, characters or a model's tokenizer to count here."));
        } else {
            // every row of the file once; the longest; with padding, the rows longer than a sequence are cut;
            // packed, each split's tokens make consecutive sequences of seq
            qint64 cut = 0, longest = -1;
            const hr::InstructRow* longestRow = nullptr;
            const std::vector<const hr::InstructRow*> all = rows.file_rows();
            for (const hr::InstructRow* r : all) {
                const qint64 n = countTokens(*r);
                if (seq > 0 && n > seq + 1) ++cut;
                if (n > longest) {
                    longest = n;
                    longestRow = r;
                }
            }
            auto packed = [&](const std::vector<hr::InstructRow>& split) {
                qint64 tokens = 0;
                for (const hr::InstructRow& r : split) tokens += countTokens(r);
                return seq > 0 && tokens > 0 ? (tokens - 1) / seq : 0;
            };
            QStringList lines;
            if (seq <= 0)
                lines << tr("The model has no sequence length: build a language model to count rows against it.");
            else if (layout == QLatin1String("pack"))
                lines << tr("Packed: the file's %1 rows make %2 training and %3 validation sequences of %4 tokens "
                            "(%5 rows longer than one sequence run on into the next).")
                             .arg(all.size())
                             .arg(packed(rows.train))
                             .arg(packed(rows.validation))
                             .arg(seq)
                             .arg(cut);
            else
                lines << tr("Padded: %1 of the file's %2 rows are longer than a sequence of %3 tokens and are cut.")
                             .arg(cut)
                             .arg(all.size())
                             .arg(seq);
            if (longestRow)
                lines << tr("The longest row: %1, %2 tokens (%3 tokenizer).")
                             .arg(rowName(*longestRow))
                             .arg(longest)
                             .arg(QString::fromStdString(tok->kind()));
            m_tokenStats->setText(lines.join(QLatin1Char('\n')));
        }
        m_previewSpec = key;
    } catch (const std::exception& e) {
        m_available = false;
        m_previewSpec.clear();
        m_status->setStyleSheet(QStringLiteral("color: #d03030;"));
        m_status->setText(tr("Not available: %1").arg(coreText(e)));
    }
}

}  // namespace hrapp
