#include "charts/MemoryCompareChart.h"

#include <algorithm>

#include "charts/ChartStyle.h"
#include "charts/PlanBarChart.h"

namespace hrw {

MemoryCompareChart::MemoryCompareChart(QWidget* parent) : QCustomPlot(parent) {
    setMinimumHeight(180);
    m_ticker.reset(new QCPAxisTickerText);
    xAxis->setTicker(m_ticker);
    xAxis->setSubTicks(false);
    xAxis->setTickLength(0, 4);
    xAxis->grid()->setVisible(false);
    xAxis->setTickLabelRotation(-30);
    m_predicted = new QCPBars(xAxis, yAxis);
    m_predicted->setName(tr("Predicted"));
    m_predicted->setBrush(QColor(0x1f, 0x77, 0xb4, 120));
    m_predicted->setPen(QPen(QColor(0x1f, 0x77, 0xb4), 1.2, Qt::DashLine));
    m_measured = new QCPBars(xAxis, yAxis);
    m_measured->setName(tr("Measured"));
    m_measured->setBrush(QColor(0x1f, 0x77, 0xb4));
    m_measured->setPen(QPen(QColor(0x1f, 0x77, 0xb4).darker(130), 1));
    m_group = new QCPBarsGroup(this);
    m_group->setSpacingType(QCPBarsGroup::stAbsolute);
    m_group->setSpacing(2);
    for (QCPBars* b : {m_predicted, m_measured}) {
        b->setWidth(0.36);
        b->setBarsGroup(m_group);
    }
    legend->setVisible(true);
    styleLegend(this);
    moveLegendBelow(this);
    legend->setWrap(2);
    legend->setFillOrder(QCPLayoutGrid::foColumnsFirst, /*rearrange=*/true);
    setDark(false);
    clearBytes();
}

void MemoryCompareChart::clearBytes() {
    m_predicted->data()->clear();
    m_measured->data()->clear();
    m_ticker->clear();
    m_shown = 0;
    xAxis->setRange(0, 1);
    yAxis->setRange(0, 1);
    replot(rpQueuedReplot);
}

void MemoryCompareChart::setBytes(const hr::CategoryBytes& predicted, const hr::CategoryBytes& measured) {
    double largest = 0;
    for (hr::MemCategory c : hr::all_categories())
        largest = std::max({largest, double(hr::at(predicted, c)), double(hr::at(measured, c))});
    QString unit;
    const double div = PlanBarChart::unitFor(largest, &unit);
    QVector<double> keys, p, m;
    m_ticker->clear();
    for (hr::MemCategory c : hr::all_categories()) {
        if (!hr::at(predicted, c) && !hr::at(measured, c)) continue;
        const double k = keys.size();
        keys << k;
        p << double(hr::at(predicted, c)) / div;
        m << double(hr::at(measured, c)) / div;
        m_ticker->addTick(k, PlanBarChart::categoryName(c));
    }
    m_shown = int(keys.size());
    m_predicted->setData(keys, p, true);
    m_measured->setData(keys, m, true);
    yAxis->setLabel(unit);
    xAxis->setRange(-0.6, std::max(0.6, keys.size() - 0.4));
    yAxis->setRange(0, std::max(largest / div * 1.08, 1e-3));
    replot(rpQueuedReplot);
}

void MemoryCompareChart::setDark(bool dark) {
    styleChart(this, dark);
    replot(rpQueuedReplot);
}

}  // namespace hrw
