#include "charts/MemoryChart.h"

#include <algorithm>

namespace hrw {

namespace {
constexpr double kMiB = 1024.0 * 1024.0;
}

MemoryChart::MemoryChart(QWidget* parent) : LiveChart(parent) {
    for (int g = 0; g < GroupCount; ++g) {
        const int s = addSeries(groupName(g), groupColor(g).darker(115));
        QColor fill = groupColor(g);
        fill.setAlpha(170);
        graph(s)->setBrush(fill);
        if (g > 0) graph(s)->setChannelFillGraph(graph(s - 1));
    }
    addSeries(tr("Capacity"), QColor(0xd6, 0x27, 0x28), /*dashed=*/true);
    // When the capacity is far above the run, a line under the title says so (outside the data; it is
    // in the layout only while it has something to say).
    QFont noteFont = font();
    noteFont.setPointSizeF(qMax(7.0, noteFont.pointSizeF() - 1));
    m_capacityNote = new QCPTextElement(this, QString(), noteFont);
    m_capacityNote->setTextColor(QColor(0xd6, 0x27, 0x28));
    m_capacityNote->setMargins(QMargins(0, 0, 0, 2));
}

MemoryChart::~MemoryChart() {
    if (!m_capacityNote->layout()) delete m_capacityNote;
}

void MemoryChart::showCapacityNote(const QString& text) {
    const bool inLayout = m_capacityNote->layout() != nullptr;
    if (text.isEmpty()) {
        if (inLayout) {
            plotLayout()->take(m_capacityNote);
            plotLayout()->simplify();
        }
        return;
    }
    m_capacityNote->setText(text);
    if (!inLayout) {
        plotLayout()->insertRow(1);  // under the title
        plotLayout()->addElement(1, 0, m_capacityNote);
    }
}

QString MemoryChart::groupName(int group) {
    switch (group) {
        case Parameters: return tr("Parameters");
        case Gradients: return tr("Gradients");
        case OptimizerState: return tr("Optimizer state");
        case Activations: return tr("Activations");
        case Workspace: return tr("Workspace");
        case Data: return tr("Data");
        default: return tr("Other");
    }
}

QColor MemoryChart::groupColor(int group) {
    static const QColor colors[GroupCount] = {QColor(0x1f, 0x77, 0xb4), QColor(0xff, 0x7f, 0x0e),
                                              QColor(0x2c, 0xa0, 0x2c), QColor(0x94, 0x67, 0xbd),
                                              QColor(0x8c, 0x56, 0x4b), QColor(0x17, 0xbe, 0xcf),
                                              QColor(0x7f, 0x7f, 0x7f)};
    return colors[std::clamp(group, 0, GroupCount - 1)];
}

MemoryChart::GroupBytes MemoryChart::groupBytes(const hr::CategoryBytes& b) {
    using hr::MemCategory;
    GroupBytes g{};
    g[Parameters] = double(hr::at(b, MemCategory::parameters));
    g[Gradients] = double(hr::at(b, MemCategory::gradients));
    g[OptimizerState] = double(hr::at(b, MemCategory::optimizer_state) + hr::at(b, MemCategory::master_weights));
    g[Activations] = double(hr::at(b, MemCategory::activations));
    g[Workspace] = double(hr::at(b, MemCategory::workspace));
    g[Data] = double(hr::at(b, MemCategory::data));
    g[Other] = double(hr::at(b, MemCategory::communication) + hr::at(b, MemCategory::other));
    return g;
}

void MemoryChart::retranslateSeries() {
    for (int g = 0; g < GroupCount; ++g) setSeriesName(g, groupName(g));
    setSeriesName(GroupCount, tr("Capacity"));
}

void MemoryChart::appendSnapshots(const QVector<double>& x, const QVector<GroupBytes>& bytes) {
    if (x.isEmpty()) return;
    for (int g = 0; g < GroupCount; ++g) {
        QVector<double> y(x.size());
        for (int i = 0; i < x.size(); ++i) {
            double sum = 0;
            for (int k = 0; k <= g; ++k) sum += bytes[i][k];
            y[i] = sum / kMiB;  // stacked: each series is the running total up to its group
        }
        appendPoints(g, x, y);
    }
    if (m_capacity > 0) {
        QVector<double> cap(x.size(), double(m_capacity) / kMiB);
        appendPoints(GroupCount, x, cap);
    }
}

void MemoryChart::setCapacity(std::size_t bytes) { m_capacity = bytes; }

void MemoryChart::setDark(bool dark) {
    LiveChart::setDark(dark);
}

void MemoryChart::rescaleForAutoView() {
    QCPGraph* top = graph(GroupCount - 1);
    if (top->data()->isEmpty()) return;
    bool found = false;
    QCPRange keys = top->data()->keyRange(found);
    double maxTop = 0;
    for (int g = GroupCount - 1; g >= 0; --g) {
        if (!graph(g)->visible()) continue;
        QCPRange v = graph(g)->data()->valueRange(found);
        maxTop = std::max(maxTop, v.upper);
        break;
    }
    const double capMiB = double(m_capacity) / kMiB;
    const bool capInView = m_capacity > 0 && capMiB <= maxTop * 1.6;
    graph(GroupCount)->setVisible(capInView);
    showCapacityNote(m_capacity > 0 && !capInView
                         ? tr("Device capacity %1 GiB (above this view)").arg(capMiB / 1024.0, 0, 'f', 1)
                         : QString());
    const double upper = std::max(capInView ? capMiB : maxTop, 1e-3) * 1.08;
    xAxis->setRange(keys.lower, keys.upper > keys.lower ? keys.upper : keys.lower + 1);
    yAxis->setRange(0, upper);
}

}  // namespace hrw
