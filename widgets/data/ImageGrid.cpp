#include "data/ImageGrid.h"

#include <QPainter>

namespace hrw {

namespace {
constexpr int kCell = 72;
constexpr int kLabel = 16;
}

ImageGrid::ImageGrid(QWidget* parent) : QWidget(parent) {
    setSizePolicy(QSizePolicy::Expanding, QSizePolicy::Preferred);
    setMinimumHeight(kCell + kLabel + 8);
}

void ImageGrid::setSamples(const QVector<QImage>& images, const QStringList& labels) {
    m_images = images;
    m_labels = labels;
    updateGeometry();
    update();
}

void ImageGrid::setPlaceholder(const QString& text) {
    m_images.clear();
    m_labels.clear();
    m_placeholder = text;
    updateGeometry();
    update();
}

int ImageGrid::columnsFor(int width) const { return qMax(1, width / (kCell + 6)); }

int ImageGrid::heightForWidth(int w) const {
    if (m_images.isEmpty()) return kCell + kLabel + 8;
    const int cols = columnsFor(w);
    const int rows = (m_images.size() + cols - 1) / cols;
    return rows * (kCell + kLabel + 6) + 4;
}

void ImageGrid::paintEvent(QPaintEvent*) {
    QPainter p(this);
    if (m_images.isEmpty()) {
        p.setPen(palette().color(QPalette::PlaceholderText));
        p.drawText(rect().adjusted(8, 8, -8, -8), Qt::AlignCenter | Qt::TextWordWrap, m_placeholder);
        return;
    }
    const int cols = columnsFor(width());
    const int cellW = width() / cols;
    QFont f = font();
    f.setPointSizeF(qMax(7.0, f.pointSizeF() - 1.5));
    p.setFont(f);
    for (int i = 0; i < m_images.size(); ++i) {
        const int r = i / cols, c = i % cols;
        const int x = c * cellW + (cellW - kCell) / 2;
        const int y = r * (kCell + kLabel + 6) + 2;
        p.setRenderHint(QPainter::SmoothPixmapTransform, false);
        p.drawImage(QRect(x, y, kCell, kCell), m_images[i]);
        p.setPen(palette().color(QPalette::Mid));
        p.drawRect(QRect(x, y, kCell - 1, kCell - 1));
        p.setPen(palette().color(QPalette::WindowText));
        const QString label = i < m_labels.size() ? m_labels[i] : QString();
        p.drawText(QRect(c * cellW, y + kCell, cellW, kLabel), Qt::AlignCenter,
                   p.fontMetrics().elidedText(label, Qt::ElideRight, cellW - 2));
    }
}

}  // namespace hrw
