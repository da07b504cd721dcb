#include "telemetry/sampler.h"

#include <algorithm>
#include <exception>

namespace hr {

int TelemetrySampler::clamp_interval_ms(int ms) { return std::clamp(ms, kMinIntervalMs, kMaxIntervalMs); }

TelemetrySampler::TelemetrySampler(std::shared_ptr<GpuTelemetrySource> gpu, Callback callback, int interval_ms,
                                   std::string proc_root)
    : gpu_(std::move(gpu)),
      callback_(std::move(callback)),
      proc_root_(proc_root),
      interval_ms_(clamp_interval_ms(interval_ms)),
      start_time_(std::chrono::steady_clock::now()),
      reader_(std::move(proc_root)) {}

TelemetrySampler::~TelemetrySampler() { stop(); }

void TelemetrySampler::set_interval_ms(int ms) {
    interval_ms_.store(clamp_interval_ms(ms));
    cv_.notify_all();
}

std::string TelemetrySampler::last_error() const {
    std::lock_guard lock(mutex_);
    return last_error_;
}

void TelemetrySampler::start() {
    if (running_.load()) return;
    {
        std::lock_guard lock(mutex_);
        stop_requested_ = false;
    }
    start_time_ = std::chrono::steady_clock::now();
    running_.store(true);
    thread_ = std::thread([this] { loop(); });
}

void TelemetrySampler::stop() {
    {
        std::lock_guard lock(mutex_);
        stop_requested_ = true;
    }
    cv_.notify_all();
    if (thread_.joinable()) thread_.join();
    running_.store(false);
}

TelemetrySample TelemetrySampler::sample_now() {
    std::lock_guard lock(sample_mutex_);
    TelemetrySample s;
    s.step = step_.load();
    s.host = reader_.read();
    if (gpu_) {
        try {
            s.gpus = gpu_->sample();
        } catch (const std::exception& e) {
            std::lock_guard l(mutex_);
            last_error_ = std::string("GPU telemetry failed: ") + e.what();
        }
    }
    s.t_seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start_time_).count();
    count_.fetch_add(1);
    return s;
}

void TelemetrySampler::loop() {
    auto next = std::chrono::steady_clock::now();
    for (;;) {
        {
            std::unique_lock lock(mutex_);
            if (stop_requested_) break;
        }
        TelemetrySample s = sample_now();
        if (callback_) {
            try {
                callback_(s);
            } catch (const std::exception& e) {
                std::lock_guard l(mutex_);
                last_error_ = std::string("telemetry callback failed: ") + e.what();
            } catch (...) {
                std::lock_guard l(mutex_);
                last_error_ = "telemetry callback failed";
            }
        }
        next += std::chrono::milliseconds(interval_ms_.load());
        const auto now = std::chrono::steady_clock::now();
        if (next < now) next = now;  // fell behind (slow source): do not burst
        std::unique_lock lock(mutex_);
        if (cv_.wait_until(lock, next, [this] { return stop_requested_; })) break;
    }
}

}  // namespace hr
