#pragma once
// ImageGrid: a grid of sample images with their labels (the data preview).
#include <QImage>
#include <QString>
#include <QVector>
#include <QWidget>

namespace hrw {

class ImageGrid : public QWidget {
    Q_OBJECT
public:
    explicit ImageGrid(QWidget* parent = nullptr);
    void setSamples(const QVector<QImage>& images, const QStringList& labels);
    void setPlaceholder(const QString& text);
    int sampleCount() const { return m_images.size(); }
    QSize sizeHint() const override { return {320, 240}; }
    bool hasHeightForWidth() const override { return true; }
    int heightForWidth(int w) const override;

protected:
    void paintEvent(QPaintEvent* event) override;

private:
    int columnsFor(int width) const;
    QVector<QImage> m_images;
    QStringList m_labels;
    QString m_placeholder;
};

}  // namespace hrw
