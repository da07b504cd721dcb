#pragma once
// The Data panel: which dataset, where it is, how many samples, and a preview grid.
#include <QWidget>

#include "train/config.h"

class QComboBox;
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

    // "fashion-mnist", "mnist", "idx:DIR", "synthetic"
    QString dataSpec() const;
    void setDataSpec(const QString& spec);
    void applyTo(hr::TrainConfig& config) const;
    void setFrom(const hr::TrainConfig& config);
    bool isAvailable() const { return m_available; }
    int previewCount() const;

signals:
    void changed();

private:
    void refresh();
    void loadPreview(const QString& dir, const QString& spec);

    QComboBox* m_dataset = nullptr;
    QLineEdit* m_path = nullptr;
    QPushButton* m_browse = nullptr;
    QLabel* m_description = nullptr;
    QLabel* m_status = nullptr;
    QSpinBox* m_trainLimit = nullptr;
    QSpinBox* m_testLimit = nullptr;
    hrw::ImageGrid* m_grid = nullptr;
    bool m_available = false;
};

}  // namespace hrapp
