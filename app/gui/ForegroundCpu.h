#pragma once
// Tells the CPU backend's thread pool when the GUI thread is at work (backend/cpu/thread_pool.h,
// foreground_begin/end): from the moment its event loop wakes up until it blocks again. On a machine
// without a core to spare, a training run then leaves one core to the window while it replots instead
// of three threads preempting each other on two cores (docs/benchmarks.md, `scripts/bench gui`).
class QObject;

namespace hrapp {

// Installs the hook on the calling thread's event dispatcher, once per dispatcher (later calls do
// nothing). It lives as long as the dispatcher; call it on the GUI thread after QApplication exists.
void installForegroundCpuHook();

// Whether the hook currently reports the GUI thread busy (tests).
bool foregroundCpuHookBusy();

// For a GUI thread about to wait outside its event loop (joining a thread, as the bench's headless
// leg does): not busy for the scope's lifetime.
class ForegroundCpuIdle {
public:
    ForegroundCpuIdle();
    ~ForegroundCpuIdle();
    ForegroundCpuIdle(const ForegroundCpuIdle&) = delete;
    ForegroundCpuIdle& operator=(const ForegroundCpuIdle&) = delete;

private:
    bool m_was = false;
};

}  // namespace hrapp
