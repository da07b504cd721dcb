#include "gui/ForegroundCpu.h"

#include <QAbstractEventDispatcher>
#include <QObject>
#include <QThread>

#include <atomic>

#include "backend/cpu/thread_pool.h"

namespace hrapp {

namespace {

std::atomic<bool> g_busy{false};

// A child of the dispatcher: destroyed with it, and ends the foreground state it began.
class ForegroundCpuHook : public QObject {
public:
    static ForegroundCpuHook* current() {
        QAbstractEventDispatcher* d = QAbstractEventDispatcher::instance(QThread::currentThread());
        return d ? d->findChild<ForegroundCpuHook*>(QStringLiteral("hrForegroundCpuHook"), Qt::FindDirectChildrenOnly)
                 : nullptr;
    }
    explicit ForegroundCpuHook(QAbstractEventDispatcher* d) : QObject(d) {
        setObjectName(QStringLiteral("hrForegroundCpuHook"));
        begin();  // installed from running code
        connect(d, &QAbstractEventDispatcher::aboutToBlock, this, [this] { end(); });
        connect(d, &QAbstractEventDispatcher::awake, this, [this] { begin(); });
    }
    ~ForegroundCpuHook() override { end(); }

    bool busy() const { return m_busy; }
    void begin() {
        if (m_busy) return;
        m_busy = true;
        g_busy.store(true, std::memory_order_relaxed);
        hr::cpu::foreground_begin();
    }
    void end() {
        if (!m_busy) return;
        m_busy = false;
        g_busy.store(false, std::memory_order_relaxed);
        hr::cpu::foreground_end();
    }

private:
    bool m_busy = false;
};

}  // namespace

void installForegroundCpuHook() {
    QAbstractEventDispatcher* d = QAbstractEventDispatcher::instance(QThread::currentThread());
    if (!d || ForegroundCpuHook::current()) return;
    new ForegroundCpuHook(d);
}

bool foregroundCpuHookBusy() { return g_busy.load(std::memory_order_relaxed); }

ForegroundCpuIdle::ForegroundCpuIdle() {
    if (ForegroundCpuHook* h = ForegroundCpuHook::current()) {
        m_was = h->busy();
        h->end();
    }
}

ForegroundCpuIdle::~ForegroundCpuIdle() {
    if (!m_was) return;
    if (ForegroundCpuHook* h = ForegroundCpuHook::current()) h->begin();
}

}  // namespace hrapp
