#include "gui/PlanSearchTask.h"

#include <QThread>

#include <exception>
#include <memory>

#include "i18n/CoreText.h"

namespace hrapp {

namespace {
struct Outcome {
    hr::PlanSearch search;
    std::exception_ptr error;
};
}  // namespace

PlanSearchTask::PlanSearchTask(QObject* parent) : QObject(parent) {}

PlanSearchTask::~PlanSearchTask() {
    if (m_thread) {
        m_thread->wait();
        delete m_thread;
    }
}

bool PlanSearchTask::start(const hr::PlanRequest& request, std::size_t budget) {
    if (m_thread) return false;
    auto outcome = std::make_shared<Outcome>();
    m_thread = QThread::create([request, budget, outcome] {
        try {
            outcome->search = hr::search_plans(request, budget);
        } catch (...) {
            outcome->error = std::current_exception();
        }
    });
    m_thread->setObjectName(QStringLiteral("plan search"));
    // queued to this object's thread; dropped if the task is destroyed first (it waits, see above)
    connect(m_thread, &QThread::finished, this, [this, outcome] {
        m_thread->deleteLater();
        m_thread = nullptr;
        QString error;
        if (outcome->error) {
            try {
                std::rethrow_exception(outcome->error);
            } catch (const std::exception& e) {
                error = coreText(e);
            } catch (...) {
                error = tr("the planner failed");
            }
        }
        emit finished(outcome->search, error);
    });
    m_thread->start(QThread::LowPriority);
    return true;
}

}  // namespace hrapp
