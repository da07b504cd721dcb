#pragma once
// SignalWatcher: SIGINT and SIGTERM as a Qt signal, safely. The handler does only what is
// async-signal-safe: it writes the signal's number to a pipe (the self-pipe trick). A QSocketNotifier
// on the pipe's read end emits interrupted() on the watcher's thread, where the receiver may do
// anything (RunController::stop() asks the trainer to stop after the current step). A second signal
// before the process ends restores the default action and raises it again: Ctrl-C twice quits at once.
// One watcher at a time; the destructor restores the previous handlers.
#include <QObject>

class QSocketNotifier;

namespace hrapp {

class SignalWatcher : public QObject {
    Q_OBJECT
public:
    explicit SignalWatcher(QObject* parent = nullptr);
    ~SignalWatcher() override;

    // Also treats `signal` (e.g. SIGUSR1, which mpirun forwards to every rank) as a request to stop.
    void watchStopSignal(int signal);

signals:
    void interrupted(int signal);

private:
    QSocketNotifier* m_notifier = nullptr;
};

}  // namespace hrapp
