#pragma once
// Host figures from /proc: CPU utilisation (deltas of /proc/stat), RAM (/proc/meminfo) and this
// process's resident memory (/proc/self/statm). The parsers take text so tests feed canned files.
#include <cstdint>
#include <optional>
#include <string>

#include "telemetry/telemetry.h"

namespace hr {

struct CpuTimes {
    std::uint64_t busy = 0;   // user + nice + system + irq + softirq + steal
    std::uint64_t idle = 0;   // idle + iowait
    std::uint64_t total() const { return busy + idle; }
};

// The aggregate "cpu " line of /proc/stat; nullopt when absent or malformed. cpu_count: "cpuN" lines.
std::optional<CpuTimes> parse_proc_stat(const std::string& text, int* cpu_count = nullptr);
// Percent busy between two readings; NaN when no time passed.
double cpu_utilization_percent(const CpuTimes& before, const CpuTimes& after);

struct MemInfo {
    std::int64_t total = -1;      // bytes
    std::int64_t available = -1;  // bytes (MemAvailable, else MemFree + Buffers + Cached)
    std::int64_t used() const { return total >= 0 && available >= 0 ? total - available : -1; }
};
std::optional<MemInfo> parse_meminfo(const std::string& text);

// Resident bytes from /proc/<pid>/statm text ("size resident shared ..." in pages).
std::optional<std::int64_t> parse_statm_rss(const std::string& text, std::int64_t page_size);

// The "VmHWM:" line of /proc/<pid>/status text (kB): the process's peak resident bytes; nullopt when absent.
std::optional<std::int64_t> parse_status_peak_rss(const std::string& text);
// This process's peak resident memory so far, as the operating system counts it (/proc/self/status
// VmHWM); -1 when it cannot be read. The ledger's figures are checked against it (docs/design.md decision 9).
std::int64_t process_peak_resident_bytes();

// Reads a whole small file (procfs files report size 0, so no stat-based sizing). nullopt on failure.
std::optional<std::string> read_text_file(const std::string& path);

// Keeps the previous /proc/stat reading so each read() gives utilisation since the last one (the
// first read gives the average since boot). Not thread-safe; one per sampler.
class HostStatsReader {
public:
    explicit HostStatsReader(std::string proc_root = "/proc");
    HostStats read();

private:
    std::string root_;
    std::optional<CpuTimes> previous_;
    std::int64_t page_size_ = 4096;
};

}  // namespace hr
