// The GUI's foreground hook (app/gui/ForegroundCpu.h): the GUI thread counts as busy for the CPU
// backend's pool while it runs and as idle while its event loop blocks, as seen from another thread;
// with the pool's thread cap checked against the CPU count the OS reports (sched_getaffinity).
#include <QtTest/QtTest>

#include <QEventLoop>
#include <QTimer>

#include <sched.h>

#include <atomic>
#include <thread>

#include "backend/cpu/thread_pool.h"
#include "gui/ForegroundCpu.h"

class TestForegroundCpu : public QObject {
    Q_OBJECT

public:
    // The pool stops yielding to a foreground thread busy for more than 25 ms on end; a loaded test
    // machine can take longer than that between two lines, so the tests hold it for 10 minutes.
    TestForegroundCpu() {
        qputenv("HEADROOM_CPU_GUI_HOLD_MS", "600000");
        qputenv("HEADROOM_CPU_YIELD_TO_GUI", "1");  // opt-in (off by default): read once, at the pool's first use
    }

private slots:
    void busyWhileRunningIdleWhileBlocked() {
        cpu_set_t set;
        CPU_ZERO(&set);
        QCOMPARE(sched_getaffinity(0, sizeof set, &set), 0);
        const int cpus = std::min(CPU_COUNT(&set), hr::cpu::kMaxThreads);

        QCOMPARE(hr::cpu::effective_threads(cpus), cpus);
        hrapp::installForegroundCpuHook();
        hrapp::installForegroundCpuHook();  // once per dispatcher
        QCOMPARE(QAbstractEventDispatcher::instance()->findChildren<QObject*>(QStringLiteral("hrForegroundCpuHook")).size(), 1);
        // running code on the GUI thread: a call for every CPU gets one less
        QVERIFY(hrapp::foregroundCpuHookBusy());
        QCOMPARE(hr::cpu::effective_threads(cpus), std::max(1, cpus - 1));

        // blocked in the event loop: another thread sees the pool's full width
        std::atomic<int> seen_threads{-1};
        std::atomic<bool> seen_busy{true};
        std::thread probe([&] {
            std::this_thread::sleep_for(std::chrono::milliseconds(250));
            seen_busy = hrapp::foregroundCpuHookBusy();
            seen_threads = hr::cpu::effective_threads(cpus);
        });
        QEventLoop loop;
        QTimer::singleShot(500, &loop, &QEventLoop::quit);
        loop.exec();
        probe.join();
        QCOMPARE(seen_busy.load(), false);
        QCOMPARE(seen_threads.load(), cpus);
        // awake again
        QVERIFY(hrapp::foregroundCpuHookBusy());
        QCOMPARE(hr::cpu::effective_threads(cpus), std::max(1, cpus - 1));
    }
};

QTEST_MAIN(TestForegroundCpu)
#include "test_foreground_cpu.moc"
