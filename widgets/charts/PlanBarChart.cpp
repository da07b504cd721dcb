#include "charts/PlanBarChart.h"

#include "text/CoreText.h"

#include <algorithm>

#include "charts/ChartStyle.h"
#include "memory/allocator.h"

namespace hrw {

PlanBarChart::PlanBarChart(QWidget* parent) : QCustomPlot(parent) {
    setMinimumHeight(150);
    setSizePolicy(QSizePolicy::Expanding, QSizePolicy::Preferred);
    m_rows.reset(new QCPAxisTickerText);
    yAxis->setTicker(m_rows);
    yAxis->grid()->setVisible(false);
    yAxis->setSubTicks(false);
    yAxis->setTickLength(0, 0);
    xAxis->setSubTicks(false);
    QCPBars* below = nullptr;
    for (hr::MemCategory c : hr::all_categories()) {
        auto* bars = new QCPBars(yAxis, xAxis);
        bars->setName(categoryName(c));
        bars->setWidth(0.55);
        bars->setStackingGap(0);
        const QColor color = categoryColor(c);
        bars->setPen(QPen(color.darker(125), 1));
        bars->setBrush(color);
        if (below) bars->moveAbove(below);
        below = bars;
        m_bars[static_cast<std::size_t>(c)] = bars;
    }
    m_capLine = new QCPItemStraightLine(this);
    m_capLine->setPen(QPen(QColor(0xd6, 0x27, 0x28), 2, Qt::DashLine));
    m_capText = new QCPItemText(this);
    m_capText->setColor(QColor(0xd6, 0x27, 0x28));
    m_capText->setClipToAxisRect(false);
    m_deviceText = new QCPItemText(this);
    m_hostText = new QCPItemText(this);
    for (QCPItemText* t : {m_deviceText, m_hostText}) {
        t->setPositionAlignment(Qt::AlignLeft | Qt::AlignVCenter);
        t->setClipToAxisRect(false);
    }
    // The legend in its own row below the plot (up to nine entries).
    legend->setVisible(true);
    styleLegend(this);
    moveLegendBelow(this);
    axisRect()->setAutoMargins(QCP::msLeft | QCP::msBottom);
    axisRect()->setMargins(QMargins(0, 22, 90, 0));  // room for the capacity label and the totals
    setDark(false);
    clearPlan();
}

QString PlanBarChart::categoryName(hr::MemCategory c) { return categoryText(c); }

QColor PlanBarChart::categoryColor(hr::MemCategory c) {
    // The monitor's memory chart colours (MemoryChart::groupColor), master weights and communication
    // as lighter shades of their group.
    static const QColor colors[hr::kMemCategoryCount] = {
        QColor(0x1f, 0x77, 0xb4), QColor(0xff, 0x7f, 0x0e), QColor(0x2c, 0xa0, 0x2c),
        QColor(0x98, 0xdf, 0x8a), QColor(0x94, 0x67, 0xbd), QColor(0x8c, 0x56, 0x4b),
        QColor(0x17, 0xbe, 0xcf), QColor(0xc7, 0xc7, 0xc7), QColor(0x7f, 0x7f, 0x7f)};
    return colors[std::clamp(static_cast<int>(c), 0, int(hr::kMemCategoryCount) - 1)];
}

double PlanBarChart::unitFor(double maxBytes, QString* unit) {
    if (maxBytes >= 2.0 * (1ull << 30)) {
        *unit = tr("GiB");
        return double(1ull << 30);
    }
    if (maxBytes >= 2.0 * (1ull << 20)) {
        *unit = tr("MiB");
        return double(1ull << 20);
    }
    *unit = tr("KiB");
    return 1024.0;
}

std::size_t PlanBarChart::barBytes(hr::MemCategory c, bool host) const {
    return hr::at(host ? m_host : m_device, c);
}

void PlanBarChart::clearPlan() {
    m_device = {};
    m_host = {};
    m_showHost = false;
    m_deviceTotal = m_hostTotal = 0;
    m_capacity = 0;
    m_capacityLabel.clear();
    relayout();
}

void PlanBarChart::setPlan(const hr::CategoryBytes& device, const hr::CategoryBytes& host, bool showHost,
                           std::size_t capacity, const QString& capacityLabel) {
    m_device = device;
    m_host = host;
    m_showHost = showHost;
    m_deviceTotal = hr::total(device);
    m_hostTotal = showHost ? hr::total(host) : 0;
    m_capacity = capacity;
    m_capacityLabel = capacityLabel;
    relayout();
}

void PlanBarChart::relayout() {
    // rows: the device on top, the host below it
    const double deviceKey = m_showHost ? 1.0 : 0.0, hostKey = 0.0;
    m_rows->clear();
    m_rows->addTick(deviceKey, tr("Device"));
    if (m_showHost) m_rows->addTick(hostKey, tr("Host"));
    yAxis->setRange(m_showHost ? -0.6 : -0.6, m_showHost ? 1.6 : 0.6);

    // the scale: the larger bar, and the capacity when it is within reach (else a note)
    const double largest = double(std::max(m_deviceTotal, m_hostTotal));
    const bool capOnScale = m_capacity > 0 && (largest <= 0 || double(m_capacity) <= 3.0 * largest);
    const double upper = std::max({largest * 1.08, capOnScale ? double(m_capacity) * 1.08 : 0.0, 1024.0});
    QString unit;
    const double div = unitFor(upper, &unit);
    xAxis->setLabel(unit);
    xAxis->setRange(0, upper / div);

    for (hr::MemCategory c : hr::all_categories()) {
        QCPBars* b = m_bars[static_cast<std::size_t>(c)];
        QVector<double> keys, values;  // sorted by key: the stacking looks bars up by key
        const double d = double(hr::at(m_device, c)), h = double(hr::at(m_host, c));
        if (m_showHost) {
            keys << hostKey;
            values << h / div;
        }
        keys << deviceKey;
        values << d / div;
        b->setData(keys, values, true);
        const bool used = d > 0 || (m_showHost && h > 0);
        if (used) b->addToLegend();
        else b->removeFromLegend();
    }
    legend->setVisible(legend->itemCount() > 0);
    wrapLegend(this);

    m_capLine->setVisible(capOnScale);
    m_capText->setVisible(m_capacity > 0);
    if (m_capacity > 0) {
        const QString text = QStringLiteral("%1 %2").arg(m_capacityLabel, coreBytesText(m_capacity));
        if (capOnScale) {
            const double x = double(m_capacity) / div;
            m_capLine->point1->setCoords(x, -10);
            m_capLine->point2->setCoords(x, 10);
            m_capText->position->setType(QCPItemPosition::ptPlotCoords);
            m_capText->position->setCoords(x, yAxis->range().upper);
            m_capText->setPositionAlignment((x > xAxis->range().upper * 0.6 ? Qt::AlignRight : Qt::AlignLeft) |
                                            Qt::AlignBottom);
            m_capText->setText(text);
        } else {
            m_capText->position->setType(QCPItemPosition::ptAxisRectRatio);
            m_capText->position->setCoords(1.0, 0.0);
            m_capText->setPositionAlignment(Qt::AlignRight | Qt::AlignBottom);
            m_capText->setText(tr("%1 (off the scale →)").arg(text));
        }
    }
    auto placeTotal = [&](QCPItemText* t, double key, std::size_t bytes, bool show) {
        t->setVisible(show);
        if (!show) return;
        t->position->setCoords(double(bytes) / div, key);
        t->setText(QStringLiteral(" ") + coreBytesText(bytes));
    };
    placeTotal(m_deviceText, deviceKey, m_deviceTotal, m_deviceTotal > 0);
    placeTotal(m_hostText, hostKey, m_hostTotal, m_showHost);
    replot(rpQueuedReplot);
}

void PlanBarChart::setDark(bool dark) {
    m_dark = dark;
    styleChart(this, dark);
    const QColor fg = chartColors(dark).foreground;
    m_deviceText->setColor(fg);
    m_hostText->setColor(fg);
    replot(rpQueuedReplot);
}

void PlanBarChart::resizeEvent(QResizeEvent* event) {
    wrapLegend(this);  // at the new size, before the replot the resize queues
    QCustomPlot::resizeEvent(event);
}

}  // namespace hrw
