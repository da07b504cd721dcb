#include "telemetry/host_stats.h"

#include <unistd.h>

#include <cstdio>
#include <fstream>
#include <sstream>

namespace hr {

std::optional<CpuTimes> parse_proc_stat(const std::string& text, int* cpu_count) {
    std::istringstream in(text);
    std::string line;
    std::optional<CpuTimes> result;
    int count = 0;
    while (std::getline(in, line)) {
        if (line.rfind("cpu", 0) != 0) continue;
        if (line.size() > 3 && line[3] >= '0' && line[3] <= '9') {
            ++count;
            continue;
        }
        if (line.size() < 4 || (line[3] != ' ' && line[3] != '\t')) continue;
        std::istringstream fields(line.substr(3));
        std::uint64_t v[8] = {};
        int n = 0;
        while (n < 8 && (fields >> v[n])) ++n;
        if (n < 4) return std::nullopt;
        CpuTimes t;
        // user nice system idle iowait irq softirq steal
        t.busy = v[0] + v[1] + v[2] + v[5] + v[6] + v[7];
        t.idle = v[3] + v[4];
        result = t;
    }
    if (cpu_count) *cpu_count = count;
    return result;
}

double cpu_utilization_percent(const CpuTimes& before, const CpuTimes& after) {
    if (after.total() <= before.total()) return kTelemetryNaN;
    const double dt = static_cast<double>(after.total() - before.total());
    const double busy = after.busy >= before.busy ? static_cast<double>(after.busy - before.busy) : 0.0;
    double p = 100.0 * busy / dt;
    return p < 0 ? 0 : (p > 100 ? 100 : p);
}

std::optional<MemInfo> parse_meminfo(const std::string& text) {
    std::istringstream in(text);
    std::string line;
    std::int64_t total = -1, available = -1, free_ = -1, buffers = -1, cached = -1;
    while (std::getline(in, line)) {
        auto colon = line.find(':');
        if (colon == std::string::npos) continue;
        std::string key = line.substr(0, colon);
        std::istringstream rest(line.substr(colon + 1));
        std::int64_t value = -1;
        std::string unit;
        if (!(rest >> value)) continue;
        rest >> unit;
        const std::int64_t bytes = unit == "kB" ? value * 1024 : value;
        if (key == "MemTotal") total = bytes;
        else if (key == "MemAvailable") available = bytes;
        else if (key == "MemFree") free_ = bytes;
        else if (key == "Buffers") buffers = bytes;
        else if (key == "Cached") cached = bytes;
    }
    if (total < 0) return std::nullopt;
    MemInfo m;
    m.total = total;
    if (available >= 0) m.available = available;
    else if (free_ >= 0) m.available = free_ + (buffers > 0 ? buffers : 0) + (cached > 0 ? cached : 0);
    return m;
}

std::optional<std::int64_t> parse_statm_rss(const std::string& text, std::int64_t page_size) {
    std::istringstream in(text);
    std::int64_t size = 0, resident = 0;
    if (!(in >> size >> resident)) return std::nullopt;
    return resident * page_size;
}

std::optional<std::string> read_text_file(const std::string& path) {
    std::FILE* f = std::fopen(path.c_str(), "rb");
    if (!f) return std::nullopt;
    std::string out;
    char buf[4096];
    std::size_t n;
    while ((n = std::fread(buf, 1, sizeof buf, f)) > 0) out.append(buf, n);
    std::fclose(f);
    return out;
}

HostStatsReader::HostStatsReader(std::string proc_root) : root_(std::move(proc_root)) {
    long ps = sysconf(_SC_PAGESIZE);
    if (ps > 0) page_size_ = ps;
}

HostStats HostStatsReader::read() {
    HostStats h;
    if (auto text = read_text_file(root_ + "/stat")) {
        int count = 0;
        if (auto now = parse_proc_stat(*text, &count)) {
            h.cpu_count = count;
            h.cpu_utilization = cpu_utilization_percent(previous_.value_or(CpuTimes{}), *now);
            previous_ = now;
        }
    }
    if (auto text = read_text_file(root_ + "/meminfo")) {
        if (auto m = parse_meminfo(*text)) {
            h.ram_total = m->total;
            h.ram_used = m->used();
        }
    }
    if (auto text = read_text_file(root_ + "/self/statm")) {
        if (auto rss = parse_statm_rss(*text, page_size_)) h.process_rss = *rss;
    }
    return h;
}

std::optional<std::int64_t> parse_status_peak_rss(const std::string& text) {
    std::istringstream in(text);
    std::string line;
    while (std::getline(in, line)) {
        if (line.rfind("VmHWM:", 0) != 0) continue;
        std::istringstream fields(line.substr(6));
        long long kb = -1;
        std::string unit;
        if (!(fields >> kb >> unit) || kb < 0 || unit != "kB") return std::nullopt;
        return static_cast<std::int64_t>(kb) * 1024;
    }
    return std::nullopt;
}

std::int64_t process_peak_resident_bytes() {
    const auto text = read_text_file("/proc/self/status");
    const auto peak = text ? parse_status_peak_rss(*text) : std::nullopt;
    return peak.value_or(-1);
}

}  // namespace hr
