#pragma once
// MemoryCompareChart: predicted against measured memory, one pair of bars per ledger category
// (grouped), for the categories either side has bytes in.
#include <qcustomplot.h>

#include "memory/category.h"

namespace hrw {

class MemoryCompareChart : public QCustomPlot {
    Q_OBJECT
public:
    explicit MemoryCompareChart(QWidget* parent = nullptr);

    void setBytes(const hr::CategoryBytes& predicted, const hr::CategoryBytes& measured);
    void clearBytes();
    int categoryCount() const { return m_shown; }  // categories drawn
    void setDark(bool dark);

private:
    QCPBars* m_predicted = nullptr;
    QCPBars* m_measured = nullptr;
    QCPBarsGroup* m_group = nullptr;
    QSharedPointer<QCPAxisTickerText> m_ticker;
    int m_shown = 0;
};

}  // namespace hrw
