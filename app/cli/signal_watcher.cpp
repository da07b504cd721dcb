#include "cli/signal_watcher.h"

#include <fcntl.h>
#include <unistd.h>

#include <QSocketNotifier>
#include <csignal>

namespace hrapp {

namespace {
int g_pipe[2] = {-1, -1};
volatile std::sig_atomic_t g_seen = 0;
struct sigaction g_previous[3];
int g_extra = 0;  // watchStopSignal()'s signal (0: none); its previous action is g_previous[2]
constexpr int kSignals[2] = {SIGINT, SIGTERM};

extern "C" void onSignal(int sig) {
    if (g_seen) {  // the second one: the default action (terminate) at once
        std::signal(sig, SIG_DFL);
        std::raise(sig);
        return;
    }
    g_seen = 1;
    const int saved = errno;
    const unsigned char b = static_cast<unsigned char>(sig);
    [[maybe_unused]] const ssize_t n = ::write(g_pipe[1], &b, 1);
    errno = saved;
}
}  // namespace

SignalWatcher::SignalWatcher(QObject* parent) : QObject(parent) {
    if (::pipe2(g_pipe, O_CLOEXEC | O_NONBLOCK) != 0) return;
    g_seen = 0;
    m_notifier = new QSocketNotifier(g_pipe[0], QSocketNotifier::Read, this);
    connect(m_notifier, &QSocketNotifier::activated, this, [this] {
        unsigned char b = 0;
        while (::read(g_pipe[0], &b, 1) == 1) emit interrupted(b);
    });
    struct sigaction sa {};
    sa.sa_handler = onSignal;
    sigemptyset(&sa.sa_mask);
    sa.sa_flags = SA_RESTART;
    for (int i = 0; i < 2; ++i) sigaction(kSignals[i], &sa, &g_previous[i]);
}

void SignalWatcher::watchStopSignal(int signal) {
    if (!m_notifier || g_extra) return;
    struct sigaction sa {};
    sa.sa_handler = onSignal;
    sigemptyset(&sa.sa_mask);
    sa.sa_flags = SA_RESTART;
    g_extra = signal;
    sigaction(signal, &sa, &g_previous[2]);
}

SignalWatcher::~SignalWatcher() {
    if (!m_notifier) return;
    for (int i = 0; i < 2; ++i) sigaction(kSignals[i], &g_previous[i], nullptr);
    if (g_extra) sigaction(g_extra, &g_previous[2], nullptr);
    g_extra = 0;
    delete m_notifier;
    ::close(g_pipe[0]);
    ::close(g_pipe[1]);
    g_pipe[0] = g_pipe[1] = -1;
}

}  // namespace hrapp
