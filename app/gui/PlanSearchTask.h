#pragma once
// PlanSearchTask: the planner's budget search (hr::search_plans, dozens of predictions) on a worker
// thread, so the window stays responsive; the result arrives as a value, on the thread that started
// the task, through finished(). One search at a time per task (start() while running is refused);
// destroying the task waits for a running search (it takes about a second).
#include <QObject>
#include <QString>

#include <cstddef>

#include "plan/planner.h"

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

}  // namespace hrapp
