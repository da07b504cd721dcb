#pragma once
// PlanSearchTask: the planner's budget search (hr::search_plans, dozens of predictions) on a worker
// thread, so the window stays responsive; the result arrives as a value, on the thread that started
// the task, through finished(). One search at a time per task (start() while running is refused);
// destroying the task waits for a running search (it takes about a second).
#include <QObject>
#include <QString>

#include <cstddef>

#include "plan/planner.h"
#include "report/plan_table.h"

class QThread;

namespace hrapp {

class PlanSearchTask : public QObject {
    Q_OBJECT
public:
    explicit PlanSearchTask(QObject* parent = nullptr);
    ~PlanSearchTask() override;

    // false when a search is still running
    bool start(const hr::PlanRequest& request, std::size_t budget);
    bool isRunning() const { return m_thread != nullptr; }

signals:
    // error: why the search failed (in the UI language), "" on success
    void finished(const hr::PlanSearch& search, const QString& error);

private:
    QThread* m_thread = nullptr;
};

// The fine-tuning table (report/plan_table.h fineTuningCells: full / LoRA / QLoRA x checkpointing x ZeRO-3
// on 1-8 cards, twelve budget searches) on a worker thread, the same way: the cells arrive through
// finished() on the starting thread. Destroying the task waits for a running computation.
class FineTuningTableTask : public QObject {
    Q_OBJECT
public:
    explicit FineTuningTableTask(QObject* parent = nullptr);
    ~FineTuningTableTask() override;

    // false when a computation is still running
    bool start(const hr::PlanRequest& request, std::size_t budget);
    bool isRunning() const { return m_thread != nullptr; }

signals:
    // error: why the table could not be computed (in the UI language), "" on success
    void finished(const hrapp::FineTuningCells& cells, const QString& error);

private:
    QThread* m_thread = nullptr;
};

}  // namespace hrapp
