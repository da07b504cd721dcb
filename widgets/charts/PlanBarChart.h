#pragma once
// PlanBarChart: the memory planner's prediction as one horizontal stacked bar per memory (the
// training device, and the host when offload keeps state there), one segment per ledger category,
// against the device's capacity (a dashed line, or a note when the capacity is far off the scale).
#include <array>
#include <cstddef>

#include <qcustomplot.h>

#include "memory/category.h"

namespace hrw {

class PlanBarChart : public QCustomPlot {
    Q_OBJECT
public:
    explicit PlanBarChart(QWidget* parent = nullptr);

    // device/host: bytes per category; host is drawn when showHost. capacity 0: none drawn.
    void setPlan(const hr::CategoryBytes& device, const hr::CategoryBytes& host, bool showHost,
                 std::size_t capacity, const QString& capacityLabel);
    void clearPlan();

    // What is drawn (bytes): for tests and tooltips.
    std::size_t deviceTotal() const { return m_deviceTotal; }
    std::size_t hostTotal() const { return m_hostTotal; }
    std::size_t barBytes(hr::MemCategory c, bool host = false) const;
    std::size_t capacity() const { return m_capacity; }
    bool capacityOnScale() const { return m_capLine->visible(); }
    bool hostShown() const { return m_showHost; }

    void setDark(bool dark);

    static QString categoryName(hr::MemCategory c);
    static QColor categoryColor(hr::MemCategory c);
    // A unit for an axis whose largest value is maxBytes: the divisor and its name (KiB, MiB, GiB).
    static double unitFor(double maxBytes, QString* unit);

protected:
    void resizeEvent(QResizeEvent* event) override;

private:
    void relayout();

    std::array<QCPBars*, hr::kMemCategoryCount> m_bars{};
    hr::CategoryBytes m_device{};
    hr::CategoryBytes m_host{};
    bool m_showHost = false;
    std::size_t m_deviceTotal = 0;
    std::size_t m_hostTotal = 0;
    std::size_t m_capacity = 0;
    QString m_capacityLabel;
    QCPItemStraightLine* m_capLine = nullptr;
    QCPItemText* m_capText = nullptr;
    QCPItemText* m_deviceText = nullptr;
    QCPItemText* m_hostText = nullptr;
    QSharedPointer<QCPAxisTickerText> m_rows;
    bool m_dark = false;
};

}  // namespace hrw
