#pragma once
// MemoryLedger: live and peak bytes per category and per layer, reserved-but-free bytes of caching
// allocators, and a bounded timeline. Thread-safe. One ledger per device per run.
#include <chrono>
#include <cstdint>
#include <map>
#include <mutex>
#include <string>
#include <unordered_map>
#include <vector>

#include "memory/category.h"

namespace hr {

struct LedgerEvent {
    double t_seconds = 0;        // since the ledger was created
    std::int64_t step = -1;      // training step at the time, -1 before training
    MemCategory category = MemCategory::other;
    int layer = -1;
    std::int64_t delta = 0;      // +bytes on allocation, -bytes on free
    std::size_t live_total = 0;  // after this event
};

struct LayerBytes {
    std::size_t live = 0;
    std::size_t peak = 0;
};

struct LedgerSnapshot {
    CategoryBytes live{};             // now
    CategoryBytes peak{};             // each category's own maximum
    CategoryBytes at_peak{};          // the split of live bytes at the moment total live was highest
    std::size_t live_total = 0;
    std::size_t peak_total = 0;
    std::size_t reserved_free = 0;    // held by a caching allocator, not handed out
    std::size_t peak_reserved = 0;    // peak of (live_total + reserved_free)
    std::string peak_phase;           // phase name when the total peak happened ("forward", ...)
    std::int64_t peak_step = -1;
    std::map<int, LayerBytes> layers;             // per layer index, activations and parameters alike
    std::map<int, CategoryBytes> layer_peak_split;  // per layer: live bytes by category at total peak
};

class MemoryLedger {
public:
    MemoryLedger();

    // Returns an id for on_free. layer is the model's layer index or -1.
    std::uint64_t on_alloc(std::size_t bytes, MemCategory category, int layer = -1);
    void on_free(std::uint64_t id);
    // Caching allocators report bytes they hold but have not handed out.
    void set_reserved_free(std::size_t bytes);

    void set_step(std::int64_t step);
    void set_phase(const std::string& phase);  // "setup", "forward", "backward", "optimizer", ...
    void reset_peaks();                          // peaks := live

    LedgerSnapshot snapshot() const;
    std::vector<LedgerEvent> timeline() const;  // the most recent events (bounded)
    std::size_t live_bytes(MemCategory c) const;
    std::size_t live_total() const;

    static constexpr std::size_t kTimelineCapacity = 20000;

private:
    struct Entry {
        std::size_t bytes;
        MemCategory category;
        int layer;
    };
    void update_peaks_locked();
    // Per layer: its live bytes by category and, lazily, its split at the total peak. A new peak copies no
    // map: it only advances peak_epoch_ (O(1)); a layer's split is saved as it was at the peak the first
    // time the layer changes after it (saved_epoch < peak_epoch_), and snapshot() assembles the map.
    struct LayerSplit {
        CategoryBytes live{};
        CategoryBytes at_peak{};         // valid when saved_epoch == peak_epoch_
        std::uint64_t saved_epoch = 0;
        std::uint64_t created_epoch = 0;  // in the peak's map when created before it (created_epoch < peak_epoch_)
    };
    LayerSplit& layer_split_locked(int layer);  // saves its peak split before a change
    std::map<int, CategoryBytes> layer_peak_split_locked() const;

    mutable std::mutex mutex_;
    std::chrono::steady_clock::time_point start_;
    std::uint64_t next_id_ = 1;
    std::unordered_map<std::uint64_t, Entry> entries_;
    LedgerSnapshot s_;
    std::map<int, LayerSplit> layer_split_;
    std::uint64_t peak_epoch_ = 0;  // advances at each new total peak (and reset_peaks)
    std::int64_t step_ = -1;
    std::string phase_ = "setup";
    std::vector<LedgerEvent> timeline_;  // ring buffer
    std::size_t timeline_head_ = 0;
};

}  // namespace hr
