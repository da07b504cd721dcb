#include "memory/ledger.h"

#include <algorithm>

#include "base/error.h"

namespace hr {

MemoryLedger::MemoryLedger() : start_(std::chrono::steady_clock::now()) {
    timeline_.reserve(1024);
}

std::uint64_t MemoryLedger::on_alloc(std::size_t bytes, MemCategory category, int layer) {
    std::lock_guard<std::mutex> lock(mutex_);
    std::uint64_t id = next_id_++;
    entries_.emplace(id, Entry{bytes, category, layer});
    at(s_.live, category) += bytes;
    s_.live_total += bytes;
    auto& lb = s_.layers[layer];
    lb.live += bytes;
    lb.peak = std::max(lb.peak, lb.live);
    at(layer_split_locked(layer).live, category) += bytes;
    update_peaks_locked();
    LedgerEvent ev{std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count(), step_,
                   category, layer, static_cast<std::int64_t>(bytes), s_.live_total};
    if (timeline_.size() < kTimelineCapacity) {
        timeline_.push_back(ev);
    } else {
        timeline_[timeline_head_] = ev;
        timeline_head_ = (timeline_head_ + 1) % kTimelineCapacity;
    }
    return id;
}

void MemoryLedger::on_free(std::uint64_t id) {
    std::lock_guard<std::mutex> lock(mutex_);
    auto it = entries_.find(id);
    if (it == entries_.end()) return;
    const Entry e = it->second;
    entries_.erase(it);
    at(s_.live, e.category) -= e.bytes;
    s_.live_total -= e.bytes;
    s_.layers[e.layer].live -= e.bytes;
    at(layer_split_locked(e.layer).live, e.category) -= e.bytes;
    LedgerEvent ev{std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count(), step_,
                   e.category, e.layer, -static_cast<std::int64_t>(e.bytes), s_.live_total};
    if (timeline_.size() < kTimelineCapacity) {
        timeline_.push_back(ev);
    } else {
        timeline_[timeline_head_] = ev;
        timeline_head_ = (timeline_head_ + 1) % kTimelineCapacity;
    }
}

void MemoryLedger::set_reserved_free(std::size_t bytes) {
    std::lock_guard<std::mutex> lock(mutex_);
    s_.reserved_free = bytes;
    s_.peak_reserved = std::max(s_.peak_reserved, s_.live_total + bytes);
}

void MemoryLedger::update_peaks_locked() {
    for (std::size_t i = 0; i < kMemCategoryCount; ++i) s_.peak[i] = std::max(s_.peak[i], s_.live[i]);
    s_.peak_reserved = std::max(s_.peak_reserved, s_.live_total + s_.reserved_free);
    if (s_.live_total > s_.peak_total) {
        s_.peak_total = s_.live_total;
        s_.at_peak = s_.live;
        s_.peak_phase = phase_;
        s_.peak_step = step_;
        ++peak_epoch_;  // every layer's split at this peak is its live split now (saved when it changes)
    }
}

MemoryLedger::LayerSplit& MemoryLedger::layer_split_locked(int layer) {
    auto [it, created] = layer_split_.try_emplace(layer);
    LayerSplit& l = it->second;
    if (created) {
        l.created_epoch = peak_epoch_;
        l.saved_epoch = peak_epoch_;  // not in the last peak's map: nothing to save
    } else if (l.saved_epoch < peak_epoch_) {
        l.at_peak = l.live;
        l.saved_epoch = peak_epoch_;
    }
    return l;
}

std::map<int, CategoryBytes> MemoryLedger::layer_peak_split_locked() const {
    std::map<int, CategoryBytes> out;
    for (const auto& [layer, l] : layer_split_)
        if (l.created_epoch < peak_epoch_) out.emplace_hint(out.end(), layer, l.saved_epoch < peak_epoch_ ? l.live : l.at_peak);
    return out;
}

void MemoryLedger::set_step(std::int64_t step) {
    std::lock_guard<std::mutex> lock(mutex_);
    step_ = step;
}

void MemoryLedger::set_phase(const std::string& phase) {
    std::lock_guard<std::mutex> lock(mutex_);
    phase_ = phase;
}

void MemoryLedger::reset_peaks() {
    std::lock_guard<std::mutex> lock(mutex_);
    s_.peak = s_.live;
    s_.peak_total = s_.live_total;
    s_.at_peak = s_.live;
    s_.peak_reserved = s_.live_total + s_.reserved_free;
    s_.peak_phase = phase_;
    s_.peak_step = step_;
    ++peak_epoch_;
    for (auto& [k, v] : s_.layers) v.peak = v.live;
}

LedgerSnapshot MemoryLedger::snapshot() const {
    std::lock_guard<std::mutex> lock(mutex_);
    LedgerSnapshot out = s_;
    out.layer_peak_split = layer_peak_split_locked();
    return out;
}

std::vector<LedgerEvent> MemoryLedger::timeline() const {
    std::lock_guard<std::mutex> lock(mutex_);
    std::vector<LedgerEvent> out;
    out.reserve(timeline_.size());
    for (std::size_t i = 0; i < timeline_.size(); ++i)
        out.push_back(timeline_[(timeline_head_ + i) % timeline_.size()]);
    return out;
}

std::size_t MemoryLedger::live_bytes(MemCategory c) const {
    std::lock_guard<std::mutex> lock(mutex_);
    return at(s_.live, c);
}

std::size_t MemoryLedger::live_total() const {
    std::lock_guard<std::mutex> lock(mutex_);
    return s_.live_total;
}

}  // namespace hr
