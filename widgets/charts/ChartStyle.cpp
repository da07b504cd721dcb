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

namespace {

// The grid moveLegendBelow made to hold the legend, and its cell in the plot layout.
QCPLayoutGrid* legendHolder(const QCustomPlot* plot) { return qobject_cast<QCPLayoutGrid*>(plot->legend->layout()); }

bool cellOf(QCPLayoutGrid* grid, const QCPLayoutElement* e, int* row, int* column) {
    for (int r = 0; r < grid->rowCount(); ++r)
        for (int c = 0; c < grid->columnCount(); ++c)
            if (grid->hasElement(r, c) && grid->element(r, c) == e) {
                *row = r;
                *column = c;
                return true;
            }
    return false;
}

// Puts the holder (and the legend in it, `columns` wide, row by row) under the axis rect or beside it.
void arrangeLegend(QCustomPlot* plot, QCPLayoutGrid* holder, LegendPlace place, int columns) {
    QCPLegend* legend = plot->legend;
    if (legend->wrap() != columns) {
        legend->setWrap(columns);
        legend->setFillOrder(QCPLayoutGrid::foColumnsFirst, /*rearrange=*/true);
    }
    QCPLayoutGrid* layout = plot->plotLayout();
    int ar = 0, ac = 0, hRow = 0, hCol = 0;
    if (!cellOf(layout, plot->axisRect(), &ar, &ac) || !cellOf(layout, holder, &hRow, &hCol)) return;
    const bool below = place == LegendPlace::Below;
    if (below ? (hRow > ar && hCol == ac) : (hRow == ar && hCol > ac)) return;  // already there
    // the holder's spacers either side (below) or above and below (beside) keep the legend as large as
    // its entries, centred
    for (int i = holder->elementCount() - 1; i >= 0; --i)
        if (QCPLayoutElement* e = holder->elementAt(i); e && e != legend) holder->remove(e);
    holder->take(legend);
    holder->simplify();
    holder->addElement(below ? 0 : 1, below ? 1 : 0, legend);
    holder->addElement(0, 0, new QCPLayoutElement(plot));
    holder->addElement(below ? 0 : 2, below ? 2 : 0, new QCPLayoutElement(plot));
    if (below) {
        holder->setColumnStretchFactors({1.0, 0.001, 1.0});
        holder->setRowStretchFactors({1.0});
    } else {
        holder->setRowStretchFactors({1.0, 0.001, 1.0});
        holder->setColumnStretchFactors({1.0});
    }
    holder->setRowSpacing(0);
    holder->setColumnSpacing(0);
    holder->setMargins(below ? QMargins(4, 0, 4, 2) : QMargins(0, 4, 4, 4));
    layout->take(holder);
    layout->simplify();  // the row or column it leaves
    cellOf(layout, plot->axisRect(), &ar, &ac);
    if (below) {
        const int r = layout->rowCount();
        layout->addElement(r, ac, holder);
        layout->setRowStretchFactor(r, 0.001);  // as tall as its entries and no taller
    } else {
        layout->addElement(ar, ac + 1, holder);
        layout->setColumnStretchFactor(ac + 1, 0.001);  // as wide as its entries and no wider
    }
}

// The legend's entries (its grid's cells, less the empty ones a wrap leaves).
int legendEntries(QCPLegend* legend) {
    int n = 0;
    for (int i = 0; i < legend->itemCount(); ++i) n += legend->item(i) != nullptr;
    return n;
}

// The legend's columns under the plot: as many entries a row as the plot's width takes.
int columnsBelow(const QCustomPlot* plot) {
    QCPLegend* legend = plot->legend;
    const int n = legendEntries(legend);
    const QFontMetrics fm(legend->font());
    int widest = 0;
    for (int i = 0; i < legend->itemCount(); ++i)
        if (auto* item = qobject_cast<QCPPlottableLegendItem*>(legend->item(i)))
            widest = std::max(widest, fm.horizontalAdvance(item->plottable()->name()));
    const int entry = widest + legend->iconSize().width() + legend->iconTextPadding() + legend->columnSpacing() + 8;
    const int width = std::max(1, plot->width() - 16);
    return std::clamp(width / std::max(1, entry), 1, n);
}

// The axis rect's area once the layout is worked out at the plot's present size.
double axisRectArea(QCustomPlot* plot) {
    QCPLayoutGrid* layout = plot->plotLayout();
    layout->update(QCPLayoutElement::upPreparation);
    layout->update(QCPLayoutElement::upMargins);
    layout->update(QCPLayoutElement::upLayout);
    const QRect r = plot->axisRect()->rect();
    return double(std::max(0, r.width())) * double(std::max(0, r.height()));
}

}  // namespace

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

LegendPlace legendPlace(const QCustomPlot* plot) {
    QCPLayoutGrid* holder = legendHolder(plot);
    int ar = 0, ac = 0, hRow = 0, hCol = 0;
    if (holder && cellOf(plot->plotLayout(), plot->axisRect(), &ar, &ac) && cellOf(plot->plotLayout(), holder, &hRow, &hCol) &&
        hRow == ar && hCol > ac)
        return LegendPlace::Beside;
    return LegendPlace::Below;
}

LegendPlace wrapLegend(QCustomPlot* plot) {
    QCPLegend* legend = plot->legend;
    QCPLayoutGrid* holder = legendHolder(plot);
    const int n = legendEntries(legend);
    if (n == 0 || !holder || holder->layout() != plot->plotLayout()) return legendPlace(plot);
    const int below = columnsBelow(plot);
    if (plot->width() <= 0 || plot->height() <= 0 || !legend->visible()) {  // nothing to weigh: under the plot
        arrangeLegend(plot, holder, LegendPlace::Below, below);
        return LegendPlace::Below;
    }
    // Weigh the places by the axis rect they leave, laid out at this size (no drawing); a place where the
    // legend is squeezed (its text cut) or runs off the chart only when no place takes it whole.
    plot->setViewport(plot->rect());
    auto whole = [plot, legend] {
        const QRect l = legend->outerRect(), v = plot->viewport();
        const QSize need = legend->minimumOuterSizeHint();
        return l.width() >= need.width() && l.height() >= need.height() && v.contains(l);
    };
    arrangeLegend(plot, holder, LegendPlace::Below, below);
    const double areaBelow = axisRectArea(plot);
    LegendPlace best = LegendPlace::Below;
    int bestColumns = below;
    double bestArea = areaBelow;
    bool bestWhole = whole();
    for (int columns = 1; columns <= std::min(2, n); ++columns) {
        arrangeLegend(plot, holder, LegendPlace::Beside, columns);
        const double area = axisRectArea(plot);
        const bool fits = whole();
        // beside only when it is worth it: a tie stays under the plot, where the eye expects it
        if ((fits && !bestWhole) || (fits == bestWhole && area > bestArea * 1.05 && area > areaBelow * 1.05)) {
            best = LegendPlace::Beside;
            bestColumns = columns;
            bestArea = area;
            bestWhole = fits;
        }
    }
    arrangeLegend(plot, holder, best, bestColumns);
    axisRectArea(plot);  // the layout as it stays, for anyone who reads it before the next replot
    return best;
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
