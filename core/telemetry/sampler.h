#pragma once
// TelemetrySampler: a thread that reads host and GPU figures every interval and hands each
// TelemetrySample to a callback (on the sampler thread: copy it, queue it, return quickly).
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <thread>

#include "telemetry/host_stats.h"
#include "telemetry/telemetry.h"

namespace hr {

class TelemetrySampler {
public:
    using Callback = std::function<void(const TelemetrySample&)>;
    static constexpr int kDefaultIntervalMs = 500;
    static constexpr int kMinIntervalMs = 100;
    static constexpr int kMaxIntervalMs = 10000;
    static int clamp_interval_ms(int ms);

    // gpu may be null (host only). proc_root is "/proc" except in tests.
    TelemetrySampler(std::shared_ptr<GpuTelemetrySource> gpu, Callback callback,
                     int interval_ms = kDefaultIntervalMs, std::string proc_root = "/proc");
    ~TelemetrySampler();  // stops and joins
    TelemetrySampler(const TelemetrySampler&) = delete;
    TelemetrySampler& operator=(const TelemetrySampler&) = delete;

    void start();  // no-op when running; the first sample is taken at once
    void stop();   // wakes the thread and joins it; no callback runs after stop() returns
    bool running() const { return running_.load(); }

    void set_interval_ms(int ms);  // clamped to 100 ms .. 10 s; takes effect at the next wait
    int interval_ms() const { return interval_ms_.load(); }

    // The training step new samples are tagged with (-1: none).
    void set_current_step(std::int64_t step) { step_.store(step); }
    std::int64_t current_step() const { return step_.load(); }

    // One sample taken now on the caller's thread (also used by the thread).
    TelemetrySample sample_now();

    std::int64_t samples_taken() const { return count_.load(); }
    // The last error thrown by the source or the callback ("" when none); the thread keeps going.
    std::string last_error() const;
    const GpuTelemetrySource* gpu_source() const { return gpu_.get(); }

private:
    void loop();

    std::shared_ptr<GpuTelemetrySource> gpu_;
    Callback callback_;
    std::string proc_root_;
    std::atomic<int> interval_ms_;
    std::atomic<std::int64_t> step_{-1};
    std::atomic<std::int64_t> count_{0};
    std::atomic<bool> running_{false};
    std::chrono::steady_clock::time_point start_time_;

    mutable std::mutex mutex_;  // guards stop_requested_, last_error_, reader_, cv
    std::condition_variable cv_;
    bool stop_requested_ = false;
    std::string last_error_;
    HostStatsReader reader_;
    std::mutex sample_mutex_;   // one sample at a time (thread vs sample_now)
    std::thread thread_;
};

}  // namespace hr
