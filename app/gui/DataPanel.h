#pragma once
// The Data panel: which dataset, where it is, how many samples, and a preview grid.
#include <QWidget>

#include "data/dataset.h"
#include "train/config.h"

class QComboBox;
class QGroupBox;
class QPlainTextEdit;
class QLabel;
class QLineEdit;
class QPushButton;
class QSpinBox;

namespace hrw {
class ImageGrid;
}

namespace hrapp {

class DataPanel : public QWidget {
    Q_OBJECT
public:
    explicit DataPanel(QWidget* parent = nullptr);

    // "fashion-mnist", "mnist", "idx:DIR", "synthetic", "text:fortunes", "text:FILE"
    QString dataSpec() const;
    void setDataSpec(const QString& spec);
    bool isText() const;  // text or instruction rows for a language model
    bool isInstructions() const;  // jsonl: instruction rows
    // "byte", "char", "bpe:N" or a tokenizer file (TrainConfig::tokenizer; applied for text data only)
    QString tokenizerSpec() const;
    void setTokenizerSpec(const QString& spec);
    bool isTable() const;    // csv: or tsv:
    QString target() const;  // a table's class column ("" for other data)
    void applyTo(hr::TrainConfig& config) const;
    void setFrom(const hr::TrainConfig& config);
    bool isAvailable() const { return m_available; }
    // The tokens a training sequence holds (--seq; the model's input [T] unless the run says otherwise):
    // instruction rows are counted against it.
    void setSequenceLength(qint64 seq);
    qint64 sequenceLength() const { return m_seq; }
    int previewCount() const;

signals:
    void changed();

private:
    void refresh();
    void refreshText(bool isFile);
    void refreshInstructions();
    void showTextFields(bool text);
    void updateTokenizerFields();
    void loadPreview(const QString& dir, const QString& spec);
    void fillTargets();
    void showTableHead(const QString& path);

    QComboBox* m_dataset = nullptr;
    QLabel* m_pathLabel = nullptr;
    QComboBox* m_tokenizer = nullptr;
    QComboBox* m_target = nullptr;
    QLabel* m_targetLabel = nullptr;
    QString m_targetsFor;     // the table whose columns m_target lists
    QString m_wantedTarget;   // setFrom's target, chosen once the columns are read
    bool m_fillingTargets = false;
    QSpinBox* m_bpeSize = nullptr;
    QLineEdit* m_tokenizerFile = nullptr;
    QPushButton* m_tokenizerBrowse = nullptr;
    QComboBox* m_chatTemplate = nullptr;
    QLabel* m_chatTemplateLabel = nullptr;
    QComboBox* m_sequences = nullptr;
    QLabel* m_sequencesLabel = nullptr;
    QLabel* m_tokenizerLabel = nullptr;
    QLabel* m_trainLimitLabel = nullptr;
    QLabel* m_testLimitLabel = nullptr;
    QGroupBox* m_previewBox = nullptr;
    QPlainTextEdit* m_textPreview = nullptr;
    hr::DatasetInfo m_probed;  // the last built-in text corpus probed (refreshText)
    std::string m_probedSpec;
    QString m_previewSpec;  // the text whose validation split the preview shows ("" : none)
    QLineEdit* m_path = nullptr;
    QPushButton* m_browse = nullptr;
    QLabel* m_description = nullptr;
    QLabel* m_status = nullptr;
    QLabel* m_tokenStats = nullptr;  // instruction rows: tokens against --seq, rows cut or packed, the longest
    qint64 m_seq = 0;
    QSpinBox* m_trainLimit = nullptr;
    QSpinBox* m_testLimit = nullptr;
    hrw::ImageGrid* m_grid = nullptr;
    bool m_available = false;
};

}  // namespace hrapp
