#pragma once
// MemoryChart: memory by ledger category as a stacked area over training steps, with the device's
// capacity as a dashed line (or, when the capacity dwarfs the run, as a note so the areas stay
// readable).
#include <array>
#include <cstddef>

#include "charts/LiveChart.h"
#include "memory/category.h"

namespace hrw {

class MemoryChart : public LiveChart {
    Q_OBJECT
public:
    // The stacked groups, bottom first. master_weights is drawn with the optimizer state and
    // communication with "other".
    enum Group { Parameters = 0, Gradients, OptimizerState, Activations, Workspace, Data, Other, GroupCount };
    using GroupBytes = std::array<double, GroupCount>;

    explicit MemoryChart(QWidget* parent = nullptr);

    static GroupBytes groupBytes(const hr::CategoryBytes& bytes);
    static QString groupName(int group);
    static QColor groupColor(int group);

    void appendSnapshots(const QVector<double>& x, const QVector<GroupBytes>& bytes);
    void setCapacity(std::size_t bytes);
    std::size_t capacity() const { return m_capacity; }
    void setDark(bool dark) override;
    void retranslateSeries();
    int capacitySeries() const { return GroupCount; }

protected:
    void rescaleForAutoView() override;

private:
    std::size_t m_capacity = 0;
    QCPItemText* m_capacityNote = nullptr;
};

}  // namespace hrw
