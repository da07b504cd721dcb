#pragma once
// MemoryChart: memory by ledger category as a stacked area over training steps, with the device's
// capacity as a dashed line (or, when the capacity dwarfs the run, as a note under the title so the
// areas stay readable). The legend sits under the plot.
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
    ~MemoryChart() override;

    static GroupBytes groupBytes(const hr::CategoryBytes& bytes);
    static QString groupName(int group);
    static QColor groupColor(int group);

    void appendSnapshots(const QVector<double>& x, const QVector<GroupBytes>& bytes);
    void setCapacity(std::size_t bytes);
    std::size_t capacity() const { return m_capacity; }
    void setDark(bool dark) override;
    void retranslateSeries();
    int capacitySeries() const { return GroupCount; }
    // The note shown under the title when the capacity is above the view ("" when none).
    QString capacityNote() const { return m_capacityNote->layout() ? m_capacityNote->text() : QString(); }

protected:
    void rescaleForAutoView() override;

private:
    void showCapacityNote(const QString& text);

    std::size_t m_capacity = 0;
    QCPTextElement* m_capacityNote = nullptr;
};

}  // namespace hrw
