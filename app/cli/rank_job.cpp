#include "cli/rank_job.h"

#include <dirent.h>
#include <signal.h>

#include <cctype>
#include <chrono>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

namespace hrapp {

namespace {

double now() {
    return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

struct Stat {
    bool ok = false;
    char state = '?';
    pid_t ppid = 0;
    unsigned long long start = 0;
};

// /proc/PID/stat: "pid (comm) state ppid ..." with the start time as field 22; comm may hold spaces and ')'
Stat readStat(pid_t pid) {
    Stat s;
    std::ifstream f("/proc/" + std::to_string(pid) + "/stat");
    std::string line;
    if (!std::getline(f, line)) return s;
    const std::size_t close = line.rfind(')');
    if (close == std::string::npos) return s;
    std::istringstream in(line.substr(close + 1));
    std::string field;
    std::vector<std::string> fields;  // from field 3 on
    while (in >> field && fields.size() < 20) fields.push_back(field);
    if (fields.size() < 20) return s;
    s.state = fields[0].empty() ? '?' : fields[0][0];
    s.ppid = static_cast<pid_t>(std::atol(fields[1].c_str()));
    s.start = std::strtoull(fields[19].c_str(), nullptr, 10);
    s.ok = true;
    return s;
}

int rankOf(pid_t pid) {
    std::ifstream f("/proc/" + std::to_string(pid) + "/environ", std::ios::binary);
    std::string var;
    while (std::getline(f, var, '\0'))
        if (var.rfind("OMPI_COMM_WORLD_RANK=", 0) == 0) return std::atoi(var.c_str() + 21);
    return -1;
}

}  // namespace

bool RankJob::alive(pid_t pid, const Seen& s) const {
    if (s.gone) return false;
    const Stat st = readStat(pid);
    return st.ok && st.start == s.start && st.state != 'Z' && st.state != 'X';
}

void RankJob::sample() {
    m_lastSample = now();
    // every process's parent, once; then the tree below mpirun
    std::map<pid_t, std::vector<pid_t>> children;
    std::map<pid_t, Stat> stats;
    if (DIR* d = ::opendir("/proc")) {
        while (dirent* e = ::readdir(d)) {
            if (!std::isdigit(static_cast<unsigned char>(e->d_name[0]))) continue;
            const pid_t pid = static_cast<pid_t>(std::atol(e->d_name));
            const Stat st = readStat(pid);
            if (!st.ok) continue;
            stats[pid] = st;
            children[st.ppid].push_back(pid);
        }
        ::closedir(d);
    }
    std::vector<pid_t> todo{m_root};
    std::set<pid_t> now_below;
    while (!todo.empty()) {
        const pid_t p = todo.back();
        todo.pop_back();
        if (!now_below.insert(p).second) continue;
        for (pid_t c : children[p]) todo.push_back(c);
    }
    for (pid_t p : now_below) {
        auto it = stats.find(p);
        if (it == stats.end() || it->second.state == 'Z') continue;
        Seen& s = m_seen[p];
        if (s.start != it->second.start) s = Seen{it->second.start, -1, -1, 0, false};
        if (s.rank < 0 && p != m_root) s.rank = rankOf(p);  // (a child that has not yet exec'd has mpirun's environment)
        const bool stopped = it->second.state == 'T' || it->second.state == 't';
        if (!stopped) s.stoppedSince = -1;
        else if (s.stoppedSince < 0) s.stoppedSince = m_lastSample;
        if (s.stoppedSince >= 0 && m_lastSample - s.stoppedSince > s.longestStop) s.longestStop = m_lastSample - s.stoppedSince;
    }
    for (auto& [pid, s] : m_seen) {
        if (s.gone || now_below.count(pid)) continue;
        auto it = stats.find(pid);
        if (it == stats.end() || it->second.start != s.start || it->second.state == 'Z') s.gone = true;
    }
}

int RankJob::signal(int sig) {
    int n = 0;
    for (auto& [pid, s] : m_seen) {
        if (!alive(pid, s)) {
            s.gone = true;
            continue;
        }
        ::kill(pid, SIGCONT);
        if (sig != SIGCONT) ::kill(pid, sig);
        ++n;
    }
    return n;
}

std::set<pid_t> RankJob::running() const {
    std::set<pid_t> out;
    for (const auto& [pid, s] : m_seen)
        if (alive(pid, s)) out.insert(pid);
    return out;
}

std::set<int> RankJob::stoppedRanks(double seconds) const {
    std::set<int> out;
    for (const auto& [pid, s] : m_seen)
        if (s.rank >= 0 && s.longestStop >= seconds) out.insert(s.rank);
    return out;
}

bool RankJob::aRankEnded() const {
    bool rootRuns = false;
    bool rankGone = false;
    for (const auto& [pid, s] : m_seen) {
        if (pid == m_root) rootRuns = !s.gone;
        else if (s.rank >= 0 && s.gone) rankGone = true;
    }
    return rootRuns && rankGone;
}

}  // namespace hrapp
