#include "charts/ChartStyle.h"

#include <algorithm>
#include <cmath>

namespace hrw {

ChartColors chartColors(bool dark) {
    if (dark) return {QColor(0x2b, 0x2d, 0x31), QColor(0xdd, 0xdd, 0xdd), QColor(0x45, 0x48, 0x4e)};
    return {QColor(Qt::white), QColor(0x30, 0x30, 0x30), QColor(0xe3, 0xe3, 0xe3)};
}

void styleChart(QCustomPlot* plot, bool dark, bool legendFrame) {
    const ChartColors c = chartColors(dark);
    plot->setBackground(c.background);
    plot->axisRect()->setBackground(c.background);
    for (QCPAxis* a : {plot->xAxis, plot->yAxis}) {
        a->setBasePen(QPen(c.foreground));
        a->setTickPen(QPen(c.foreground));
        a->setSubTickPen(QPen(c.foreground));
        a->setTickLabelColor(c.foreground);
        a->setLabelColor(c.foreground);
        a->grid()->setPen(QPen(c.grid, 1, Qt::DotLine));
    }
    plot->legend->setBrush(c.background);
    plot->legend->setBorderPen(legendFrame ? QPen(c.grid) : QPen(Qt::NoPen));
    plot->legend->setTextColor(c.foreground);
    for (int i = 0; i < plot->legend->itemCount(); ++i)
        if (auto* item = plot->legend->item(i)) item->setTextColor(c.foreground);
}

void styleLegend(QCustomPlot* plot) {
    plot->legend->setIconSize(14, 8);
    QFont f = plot->font();
    f.setPointSizeF(std::max(7.0, f.pointSizeF() - 1));
    plot->legend->setFont(f);
    plot->legend->setRowSpacing(0);
    plot->legend->setColumnSpacing(12);
}

QCPLayoutGrid* moveLegendBelow(QCustomPlot* plot) {
    auto* row = new QCPLayoutGrid;
    QCPLayoutGrid* layout = plot->plotLayout();
    const int r = layout->rowCount();
    layout->addElement(r, 0, row);
    for (int i = 0; i < plot->axisRect()->insetLayout()->elementCount(); ++i)
        if (plot->axisRect()->insetLayout()->elementAt(i) == plot->legend) {
            plot->axisRect()->insetLayout()->take(plot->legend);
            break;
        }
    // spacers either side keep the legend as wide as its entries, centred
    row->addElement(0, 0, new QCPLayoutElement(plot));
    row->addElement(0, 1, plot->legend);
    row->addElement(0, 2, new QCPLayoutElement(plot));
    row->setColumnStretchFactors({1.0, 0.001, 1.0});
    row->setColumnSpacing(0);
    row->setMargins(QMargins(4, 0, 4, 2));
    plot->legend->setFillOrder(QCPLayoutGrid::foColumnsFirst, /*rearrange=*/true);
    plot->legend->setMargins(QMargins(4, 1, 4, 1));
    layout->setRowStretchFactor(r, 0.001);
    // keep the legend row as tall as its entries and no taller
    row->setMinimumMargins(QMargins(0, 0, 0, 0));
    return row;
}

void wrapLegend(QCustomPlot* plot) {
    QCPLegend* legend = plot->legend;
    const int n = legend->itemCount();
    if (n == 0) return;
    const QFontMetrics fm(legend->font());
    int widest = 0;
    for (int i = 0; i < n; ++i)
        if (auto* item = qobject_cast<QCPPlottableLegendItem*>(legend->item(i)))
            widest = std::max(widest, fm.horizontalAdvance(item->plottable()->name()));
    const int entry = widest + legend->iconSize().width() + legend->iconTextPadding() + legend->columnSpacing() + 8;
    const int width = std::max(1, plot->width() - 16);
    const int columns = std::clamp(width / std::max(1, entry), 1, n);
    if (legend->wrap() != columns) {
        legend->setWrap(columns);
        legend->setFillOrder(QCPLayoutGrid::foColumnsFirst, /*rearrange=*/true);  // row by row, `columns` wide
    }
}

QCPRange fitRange(double lower, double upper, double margin, bool includeZero) {
    if (!std::isfinite(lower) || !std::isfinite(upper)) return QCPRange(0, 1);
    if (lower > upper) std::swap(lower, upper);
    if (includeZero && lower > 0) lower = 0;
    if (includeZero && upper < 0) upper = 0;
    double span = upper - lower;
    if (span <= 0) {
        const double half = std::abs(upper) > 0 ? std::abs(upper) * 0.05 : 0.5;
        return QCPRange(includeZero && lower >= 0 ? std::max(0.0, lower - half) : lower - half, upper + half);
    }
    const double pad = span * margin;
    return QCPRange(includeZero && lower >= 0 && lower - pad < 0 ? 0.0 : lower - pad, upper + pad);
}

QCPRange fitKeyRange(double lower, double upper, double margin) {
    if (!std::isfinite(lower) || !std::isfinite(upper)) return QCPRange(0, 1);
    if (lower > upper) std::swap(lower, upper);
    if (upper - lower <= 0) return QCPRange(lower - 0.5, upper + 0.5);
    const double pad = (upper - lower) * margin;
    return QCPRange(lower - pad, upper + pad);
}

}  // namespace hrw
