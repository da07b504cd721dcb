#include "cli/rank_events.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <algorithm>
#include <chrono>

#include <QDir>
#include <QFile>

#include <nlohmann/json.hpp>

#include "session/RunEvent.h"

namespace hrapp {

// A TCP connection to HOST:PORT for forwarding (sends time out after 10 s); -1 when it cannot be made.
int connectRankEventsUpstream(const QString& address) {
    const qsizetype colon = address.lastIndexOf(QLatin1Char(':'));
    if (colon <= 0) return -1;
    QString host = address.left(colon);
    if (host.startsWith(QLatin1Char('[')) && host.endsWith(QLatin1Char(']'))) host = host.mid(1, host.size() - 2);
    const QByteArray h = host.toUtf8(), port = address.mid(colon + 1).toUtf8();
    addrinfo hints{};
    hints.ai_socktype = SOCK_STREAM;
    addrinfo* found = nullptr;
    if (::getaddrinfo(h.constData(), port.constData(), &hints, &found) != 0) return -1;
    int fd = -1;
    for (addrinfo* a = found; a && fd < 0; a = a->ai_next) {
        fd = ::socket(a->ai_family, a->ai_socktype | SOCK_CLOEXEC, a->ai_protocol);
        if (fd < 0) continue;
        timeval tv{10, 0};
        ::setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof tv);
        if (::connect(fd, a->ai_addr, a->ai_addrlen) != 0) {
            ::close(fd);
            fd = -1;
        }
    }
    ::freeaddrinfo(found);
    return fd;
}

bool sendAllRankEvents(int fd, const std::string& bytes) {
    for (std::size_t sent = 0; sent < bytes.size();) {
        const ssize_t n = ::send(fd, bytes.data() + sent, bytes.size() - sent, MSG_NOSIGNAL);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) return false;
        sent += static_cast<std::size_t>(n);
    }
    return true;
}

namespace {

constexpr std::size_t kLongestEventLine = 16 << 20;  // a line longer than this is no event: the peer is dropped

}  // namespace

double RankEvents::clock() {
    return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

RankEvents::~RankEvents() {
    for (Peer& p : m_peers)
        if (p.fd >= 0) ::close(p.fd);
    if (m_listen >= 0) ::close(m_listen);
    if (m_upstream >= 0) ::close(m_upstream);
    for (auto& [rank, fd] : m_files) ::close(fd);
}

bool RankEvents::listen(const QString& host, QString* error) {
    addrinfo hints{};
    hints.ai_socktype = SOCK_STREAM;
    hints.ai_flags = AI_PASSIVE | AI_NUMERICSERV;
    addrinfo* found = nullptr;
    const QByteArray h = host.toUtf8();
    if (const int rc = ::getaddrinfo(h.constData(), "0", &hints, &found); rc != 0) {
        if (error) *error = QStringLiteral("%1: %2").arg(host, QString::fromLocal8Bit(::gai_strerror(rc)));
        return false;
    }
    for (addrinfo* a = found; a && m_listen < 0; a = a->ai_next) {
        const int fd = ::socket(a->ai_family, a->ai_socktype | SOCK_CLOEXEC | SOCK_NONBLOCK, a->ai_protocol);
        if (fd < 0) continue;
        if (::bind(fd, a->ai_addr, a->ai_addrlen) != 0 || ::listen(fd, 64) != 0) {
            ::close(fd);
            continue;
        }
        sockaddr_storage bound{};
        socklen_t len = sizeof bound;
        ::getsockname(fd, reinterpret_cast<sockaddr*>(&bound), &len);
        char name[NI_MAXHOST] = {}, port[NI_MAXSERV] = {};
        ::getnameinfo(reinterpret_cast<sockaddr*>(&bound), len, name, sizeof name, port, sizeof port,
                      NI_NUMERICHOST | NI_NUMERICSERV);
        m_host = bound.ss_family == AF_INET6 ? QStringLiteral("[%1]").arg(QString::fromLatin1(name)) : QString::fromLatin1(name);
        m_port = std::atoi(port);
        m_listen = fd;
    }
    const int err = errno;
    ::freeaddrinfo(found);
    if (m_listen < 0 && error) *error = QStringLiteral("%1: %2").arg(host, QString::fromLocal8Bit(std::strerror(err)));
    return m_listen >= 0;
}

QString RankEvents::address() const { return QStringLiteral("%1:%2").arg(m_host).arg(m_port); }

bool RankEvents::forwardTo(const QString& address, const QString& dir) {
    if (address.isEmpty()) {
        m_dir = dir;
        return true;
    }
    m_upstream = connectRankEventsUpstream(address);
    return m_upstream >= 0;
}

void RankEvents::pump() {
    if (m_listen < 0) return;
    for (;;) {
        const int fd = ::accept4(m_listen, nullptr, nullptr, SOCK_CLOEXEC | SOCK_NONBLOCK);
        if (fd < 0) break;
        m_peers.push_back(Peer{fd, -1, {}});
    }
    char buf[65536];
    for (Peer& p : m_peers) {
        while (p.fd >= 0) {
            const ssize_t n = ::recv(p.fd, buf, sizeof buf, 0);
            if (n < 0 && errno == EINTR) continue;
            if (n < 0) break;  // nothing more now
            if (n == 0) {      // the rank closed its connection (it ended, or died)
                ::close(p.fd);
                p.fd = -1;
                if (auto it = m_beats.find(p.rank); it != m_beats.end()) it->second.closed = clock();
                break;
            }
            p.partial.append(buf, static_cast<std::size_t>(n));
            std::size_t nl;
            while ((nl = p.partial.find('\n')) != std::string::npos) {
                const std::string line = p.partial.substr(0, nl);
                p.partial.erase(0, nl + 1);
                if (!line.empty()) handleLine(p, line);
            }
            if (p.partial.size() > kLongestEventLine) {
                ::close(p.fd);
                p.fd = -1;
            }
        }
    }
}

void RankEvents::handleLine(Peer& peer, const std::string& line) {
    nlohmann::json j;
    try {
        j = nlohmann::json::parse(line);
    } catch (const nlohmann::json::exception&) {
        return;  // not an event: whoever reads the lines on says so (RankRelay); nothing to judge here
    }
    if (!j.is_object() || !j.contains("rank") || !j["rank"].is_number_integer()) return;
    const int rank = j["rank"].get<int>();
    if (peer.rank < 0) peer.rank = rank;
    forward(rank, line);
    try {
        const RunEvent e = runEventFromJson(j);
        if (const auto* t = std::get_if<RankTelemetry>(&e); t && t->progress) {
            Beat& b = m_beats[rank];
            b.progress = *t->progress;
            b.received = clock();
            b.host = t->host;
        } else if (std::holds_alternative<RunEnded>(e)) {
            m_beats[rank].ended = true;
        }
    } catch (const std::exception&) {
    }
}

void RankEvents::forward(int rank, const std::string& line) {
    const std::string bytes = line + "\n";
    if (m_upstream >= 0) {
        if (!sendAllRankEvents(m_upstream, bytes)) {  // the parent is gone: the run goes on, unheard
            ::close(m_upstream);
            m_upstream = -1;
        }
        return;
    }
    if (m_dir.isEmpty()) return;
    auto it = m_files.find(rank);
    if (it == m_files.end()) {
        QDir().mkpath(m_dir);
        const QByteArray path = QFile::encodeName(QDir(m_dir).filePath(QStringLiteral("rank%1.jsonl").arg(rank)));
        it = m_files.emplace(rank, ::open(path.constData(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644)).first;
    }
    if (it->second >= 0 && ::write(it->second, bytes.data(), bytes.size()) < 0) {
        ::close(it->second);
        it->second = -1;
    }
}

std::vector<RankEvents::Stall> RankEvents::stalls(double timeout, double now, bool atEnd) const {
    return stallsOf(m_beats, timeout, now, atEnd);
}

std::vector<RankEvents::Stall> RankEvents::stallsOf(const std::map<int, Beat>& beats, double timeout, double now,
                                                    bool atEnd) {
    std::vector<Stall> out;
    for (const auto& [rank, b] : beats) {
        if (b.ended || b.received <= 0) continue;  // its own end, or no heartbeat yet
        if (!atEnd && b.closed >= 0) continue;
        const double heardUntil = b.closed >= 0 ? b.closed : now;
        const double silence = heardUntil - b.received;
        if (silence >= timeout) {  // nothing heard: stopped, or its host cut off
            out.push_back(Stall{rank, b.progress.step, true, silence, b.host});
            continue;
        }
        // before its first step a rank sets up (data, model, engines) at its own pace, in no collective the
        // heartbeats see: not judged running (the others' timeout still ends the job)
        if (b.progress.step <= 0) continue;
        const double still = b.progress.still_seconds + silence;
        // once the job has ended: a rank whose last word is from an earlier step than a step another rank waited
        // in for the whole timeout did not get there (its heartbeat of the later step did not come through)
        if (atEnd) {
            double awaited = -1;
            for (const auto& [other, ob] : beats)
                if (other != rank && ob.received > 0 && !ob.progress.waiting.empty() && ob.progress.step > b.progress.step)
                    awaited = std::max(awaited, ob.progress.still_seconds + ((ob.closed >= 0 ? ob.closed : now) - ob.received));
            if (awaited >= timeout) {
                out.push_back(Stall{rank, b.progress.step + 1, false, awaited, b.host});
                continue;
            }
        }
        if (!b.progress.waiting.empty() || still < timeout) continue;
        // computing this long: a stall only while another rank waits for it (that rank's last word)
        bool othersWait = false;
        for (const auto& [other, ob] : beats)
            if (other != rank && ob.received > 0 && !ob.progress.waiting.empty()) othersWait = true;
        if (othersWait) out.push_back(Stall{rank, b.progress.step, false, still, b.host});
    }
    return out;
}

}  // namespace hrapp
