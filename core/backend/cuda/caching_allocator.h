#pragma once
// CachingAllocator: the device-independent half of the CUDA caching allocator, in plain C++ so it
// is unit-tested on the CPU with a fake device heap (tests/unit/test_caching_allocator.cpp).
// The CUDA half (cuda_allocator.cpp) only supplies a DeviceHeap made of cudaMalloc / cudaFree /
// cudaMemGetInfo / cudaMemsetAsync on the compute stream.
//
// Bookkeeping (after PyTorch's CUDACachingAllocator, simplified to one stream):
// - Requests are rounded up to 512 bytes. Requests up to 1 MiB come from the small pool, whose
//   segments are 2 MiB; requests up to 10 MiB from 20 MiB segments; larger ones get a segment of
//   their size rounded up to 2 MiB. Small and large blocks never mix.
// - A free block is found best-fit (smallest size that fits, then lowest address). A block with
//   enough left over is split: the rest stays free in the pool (small pool: >= 512 B left; large
//   pool: > 1 MiB left). A freed block merges with its free neighbours within its segment.
// - Stream-ordered reuse: every kernel, copy and memset of the backend runs on its one compute stream
//   (copies on the copy stream are fenced against it with events), so a block freed by the host may
//   be handed out again at once: the next user's work is queued behind the previous user's work.
// - On out-of-memory the allocator frees every segment that is wholly free (cudaFree) and retries
//   once; then it throws hr::Error saying what was requested, what the device has free, what this
//   process holds by category, the largest consumers, and which strategies cut the largest category.
//   Nothing changes on failure: the allocator stays usable.
// - The ledger records the bytes asked for; reserved_free is reported as reserved - live requested
//   bytes, so live_total + reserved_free equals the bytes this allocator holds on the device.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "base/error.h"
#include "memory/allocator.h"

namespace hr {

// The raw device memory functions the caching allocator sits on.
struct DeviceHeap {
    // Returns nullptr when the device is out of memory; throws hr::Error on any other failure.
    std::function<void*(std::size_t bytes)> raw_alloc;
    std::function<void(void* ptr)> raw_free;
    // Device memory free and total now; returns false when unknown.
    std::function<bool(std::size_t& free_bytes, std::size_t& total_bytes)> mem_info;
    // Zero-fills bytes handed out (Tensor::empty promises zeros); may be empty (no zeroing).
    std::function<void(void* ptr, std::size_t bytes)> zero;
};

struct CachingAllocatorStats {
    std::size_t allocated = 0;         // bytes of blocks handed out (rounded sizes)
    std::size_t requested = 0;         // bytes asked for by live allocations
    std::size_t reserved = 0;          // bytes held from the device (all segments)
    std::size_t reserved_free = 0;     // reserved - allocated: cached, not handed out
    std::size_t largest_free_block = 0;
    std::size_t segments = 0;
    std::size_t live_blocks = 0;
    std::size_t free_blocks = 0;
    std::uint64_t device_allocs = 0;   // raw_alloc calls that succeeded
    std::uint64_t device_frees = 0;    // raw_free calls
    std::uint64_t cache_hits = 0;      // requests served from a cached block
    std::uint64_t ooms = 0;            // requests that failed after freeing the cache
    // 1 - largest free block / all free bytes: 0 when the free bytes are one block (or none).
    double fragmentation() const {
        return reserved_free == 0 ? 0.0
                                  : 1.0 - static_cast<double>(largest_free_block) / static_cast<double>(reserved_free);
    }
};

class CachingAllocator : public Allocator {
public:
    static constexpr std::size_t kRound = 512;
    static constexpr std::size_t kSmallLimit = std::size_t(1) << 20;      // requests <= 1 MiB: small pool
    static constexpr std::size_t kSmallSegment = std::size_t(2) << 20;    // 2 MiB
    static constexpr std::size_t kMediumLimit = std::size_t(10) << 20;    // requests <= 10 MiB
    static constexpr std::size_t kMediumSegment = std::size_t(20) << 20;  // 20 MiB
    static constexpr std::size_t kLargeRound = std::size_t(2) << 20;      // larger: round to 2 MiB
    static constexpr std::size_t kLargeMinSplit = std::size_t(1) << 20;   // split large blocks if > 1 MiB left

    CachingAllocator(Device device, std::shared_ptr<MemoryLedger> ledger, DeviceHeap heap)
        : Allocator(std::move(ledger)), device_(device), heap_(std::move(heap)) {}
    ~CachingAllocator() override {
        // Live Storages must not outlive their allocator; whatever is left is returned to the device.
        std::lock_guard<std::mutex> lock(mutex_);
        for (auto& seg : segments_) {
            for (Block* b = seg->head; b;) {
                Block* next = b->next;
                delete b;
                b = next;
            }
            try {
                heap_.raw_free(seg->base);
            } catch (...) {  // never throw from a destructor (the driver may be shutting down)
            }
        }
    }

    Device device() const override { return device_; }

    std::shared_ptr<Storage> allocate(std::size_t bytes, MemCategory category, int layer = -1) override {
        void* p = allocate_raw(bytes, category, layer);
        std::uint64_t id = 0;
        try {
            id = ledger_->on_alloc(bytes, category, layer);
            if (heap_.zero) heap_.zero(p, bytes);
            return std::make_shared<Storage>(p, bytes, device_, this, id, category, layer);
        } catch (...) {
            if (id) ledger_->on_free(id);
            free_raw(p);
            throw;
        }
    }

    // Returns every wholly free segment to the device. Returns the bytes released.
    std::size_t empty_cache() {
        std::lock_guard<std::mutex> lock(mutex_);
        std::size_t released = empty_cache_locked();
        report_locked();
        return released;
    }

    CachingAllocatorStats stats() const {
        std::lock_guard<std::mutex> lock(mutex_);
        CachingAllocatorStats s = counters_;
        s.allocated = allocated_;
        s.requested = requested_;
        s.reserved = reserved_;
        s.reserved_free = reserved_ - allocated_;
        s.segments = segments_.size();
        s.live_blocks = live_.size();
        s.free_blocks = free_small_.size() + free_large_.size();
        std::size_t largest = 0;
        if (!free_small_.empty()) largest = std::max(largest, (*free_small_.rbegin())->size);
        if (!free_large_.empty()) largest = std::max(largest, (*free_large_.rbegin())->size);
        s.largest_free_block = largest;
        return s;
    }

    // Rounded size a request occupies, and the segment size a new segment for it would have.
    static std::size_t round_size(std::size_t bytes) {
        if (bytes == 0) return kRound;
        return (bytes + kRound - 1) / kRound * kRound;
    }
    static std::size_t segment_size(std::size_t rounded) {
        if (rounded <= kSmallLimit) return kSmallSegment;
        if (rounded <= kMediumLimit) return kMediumSegment;
        return (rounded + kLargeRound - 1) / kLargeRound * kLargeRound;
    }

protected:
    void release(void* data, std::size_t) override { free_raw(data); }

private:
    struct Segment;
    struct Block {
        char* ptr;
        std::size_t size;
        std::size_t requested = 0;  // bytes asked for while allocated
        bool allocated = false;
        bool small;
        Block* prev = nullptr;  // neighbours within the same segment
        Block* next = nullptr;
        Segment* segment;
    };
    struct Segment {
        char* base;
        std::size_t size;
        bool small;
        Block* head = nullptr;  // the block at base; merges keep the earlier block, so it never changes
    };
    struct BySizeThenAddress {
        bool operator()(const Block* a, const Block* b) const {
            if (a->size != b->size) return a->size < b->size;
            return std::less<const char*>()(a->ptr, b->ptr);
        }
    };
    using FreeSet = std::set<Block*, BySizeThenAddress>;

    FreeSet& pool(bool small) { return small ? free_small_ : free_large_; }

    void* allocate_raw(std::size_t bytes, MemCategory category, int layer) {
        std::lock_guard<std::mutex> lock(mutex_);
        const std::size_t size = round_size(bytes);
        const bool small = size <= kSmallLimit;
        Block* b = find_free_locked(size, small);
        if (b) {
            ++counters_.cache_hits;
        } else {
            b = new_segment_locked(size, small, bytes, category, layer);  // throws the OOM error
        }
        pool(small).erase(b);
        maybe_split_locked(b, size);
        b->allocated = true;
        b->requested = bytes;
        allocated_ += b->size;
        requested_ += bytes;
        live_.emplace(b->ptr, b);
        report_locked();
        return b->ptr;
    }

    void free_raw(void* p) {
        std::lock_guard<std::mutex> lock(mutex_);
        auto it = live_.find(static_cast<char*>(p));
        if (it == live_.end()) return;  // not ours (cannot happen through Storage)
        Block* b = it->second;
        live_.erase(it);
        allocated_ -= b->size;
        requested_ -= b->requested;
        b->allocated = false;
        b->requested = 0;
        // Merge with free neighbours in the same segment.
        if (b->prev && !b->prev->allocated) b = merge_locked(b->prev, b);
        if (b->next && !b->next->allocated) b = merge_locked(b, b->next);
        pool(b->small).insert(b);
        report_locked();
    }

    Block* find_free_locked(std::size_t size, bool small) {
        FreeSet& fs = pool(small);
        Block key{nullptr, size, 0, false, small, nullptr, nullptr, nullptr};
        auto it = fs.lower_bound(&key);
        return it == fs.end() ? nullptr : *it;
    }

    // Splits b (already out of the free set) so that it is `size` bytes; the rest goes back free.
    void maybe_split_locked(Block* b, std::size_t size) {
        const std::size_t rest = b->size - size;
        const bool split = b->small ? rest >= kRound : rest > kLargeMinSplit;
        if (!split) return;
        Block* r = new Block{b->ptr + size, rest, 0, false, b->small, b, b->next, b->segment};
        if (b->next) b->next->prev = r;
        b->next = r;
        b->size = size;
        pool(r->small).insert(r);
    }

    // a and b adjacent (a before b), both not allocated; b may be in the free set, a may be too.
    Block* merge_locked(Block* a, Block* b) {
        pool(a->small).erase(a);
        pool(b->small).erase(b);
        a->size += b->size;
        a->next = b->next;
        if (b->next) b->next->prev = a;
        delete b;
        return a;
    }

    Block* new_segment_locked(std::size_t size, bool small, std::size_t bytes, MemCategory category, int layer) {
        const std::size_t seg_size = segment_size(size);
        void* p = heap_.raw_alloc(seg_size);
        if (!p) {
            // Out of memory: give back every wholly free segment, then try once more.
            empty_cache_locked();
            p = heap_.raw_alloc(seg_size);
        }
        if (!p) {
            ++counters_.ooms;
            report_locked();
            std::size_t free_b = 0, total_b = 0;
            if (heap_.mem_info) heap_.mem_info(free_b, total_b);
            throw OutOfMemory(oom_message_locked(bytes, size, seg_size, category, layer), bytes, category, layer,
                              total_b, ledger_->snapshot());
        }
        ++counters_.device_allocs;
        auto seg = std::make_unique<Segment>(Segment{static_cast<char*>(p), seg_size, small, nullptr});
        Block* b = new Block{seg->base, seg_size, 0, false, small, nullptr, nullptr, seg.get()};
        seg->head = b;
        segments_.push_back(std::move(seg));
        reserved_ += seg_size;
        pool(small).insert(b);  // allocate_raw takes it out again
        return b;
    }

    std::size_t empty_cache_locked() {
        std::size_t released = 0;
        for (auto it = segments_.begin(); it != segments_.end();) {
            Segment* seg = it->get();
            // A wholly free segment is one free block covering it (frees always merge).
            Block* whole = seg->head;
            if (whole->allocated || whole->size != seg->size) {
                ++it;
                continue;
            }
            pool(seg->small).erase(whole);
            delete whole;
            heap_.raw_free(seg->base);
            ++counters_.device_frees;
            reserved_ -= seg->size;
            released += seg->size;
            it = segments_.erase(it);
        }
        return released;
    }

    void report_locked() {
        // The ledger counts requested bytes; what else the device holds for us is reserved-but-free.
        ledger_->set_reserved_free(reserved_ - requested_);
    }

    static std::string strategies_for(MemCategory c) {
        switch (c) {
            case MemCategory::activations:
                return "activation checkpointing (recompute), a smaller batch (or micro-batches with gradient "
                       "accumulation), or bf16 mixed precision";
            case MemCategory::optimizer_state:
                return "SGD (no state) or SGD with momentum (one buffer instead of Adam's two), or optimizer state "
                       "offload to host memory";
            case MemCategory::parameters:
            case MemCategory::gradients:
                return "bf16 mixed precision (half the bytes per value), or a smaller model";
            case MemCategory::master_weights:
                return "optimizer offload (master weights on the host), or f32 training without master copies";
            case MemCategory::workspace:
                return "a smaller convolution workspace limit, or a smaller batch";
            case MemCategory::data:
                return "a smaller batch";
            default:
                return "a smaller batch or a smaller model";
        }
    }

    std::string oom_message_locked(std::size_t bytes, std::size_t rounded, std::size_t seg_size, MemCategory category,
                                   int layer) const {
        std::string m = "out of GPU memory on " + device_.str() + ": could not allocate " + format_bytes(bytes) +
                        " for " + category_name(category) +
                        (layer >= 0 ? " of layer " + std::to_string(layer) : std::string()) + " (a new " +
                        format_bytes(seg_size) + " block";
        if (rounded != bytes) m += " for the request rounded to " + format_bytes(rounded);
        m += ", after returning the allocator's unused cache to the device and retrying).";
        std::size_t dev_free = 0, dev_total = 0;
        if (heap_.mem_info && heap_.mem_info(dev_free, dev_total))
            m += " The device has " + format_bytes(dev_free) + " free of " + format_bytes(dev_total) + ".";
        const LedgerSnapshot s = ledger_->snapshot();
        m += " This process holds " + format_bytes(reserved_) + " on it: " + format_bytes(s.live_total) + " in use";
        // Categories, largest first.
        std::vector<std::pair<std::size_t, MemCategory>> cats;
        for (MemCategory c : all_categories())
            if (at(s.live, c) > 0) cats.emplace_back(at(s.live, c), c);
        std::sort(cats.begin(), cats.end(), [](const auto& a, const auto& b) { return a.first > b.first; });
        if (!cats.empty()) {
            m += " (";
            for (std::size_t i = 0; i < cats.size(); ++i) {
                if (i) m += ", ";
                m += std::string(category_name(cats[i].second)) + " " + format_bytes(cats[i].first);
            }
            m += ")";
        }
        m += " and " + format_bytes(reserved_ - requested_) + " cached.";
        // Largest consumers by layer.
        std::vector<std::pair<std::size_t, int>> layers;
        for (const auto& [l, lb] : s.layers)
            if (l >= 0 && lb.live > 0) layers.emplace_back(lb.live, l);
        std::sort(layers.begin(), layers.end(), [](const auto& a, const auto& b) { return a.first > b.first; });
        if (!layers.empty()) {
            m += " Largest consumers: ";
            for (std::size_t i = 0; i < layers.size() && i < 3; ++i) {
                if (i) m += ", ";
                m += "layer " + std::to_string(layers[i].second) + " " + format_bytes(layers[i].first);
            }
            m += ".";
        }
        // What would help: the largest category, or the one asked for when nothing is held yet.
        const MemCategory target = cats.empty() ? category : cats.front().second;
        m += std::string(" To cut ") + category_name(target) + (cats.empty() ? "" : " (the largest category)") +
             ": " + strategies_for(target) + ". 'headroom plan --budget' shows what each strategy saves.";
        return m;
    }

    Device device_;
    DeviceHeap heap_;
    mutable std::mutex mutex_;
    std::vector<std::unique_ptr<Segment>> segments_;
    FreeSet free_small_, free_large_;
    std::unordered_map<char*, Block*> live_;
    std::size_t allocated_ = 0, requested_ = 0, reserved_ = 0;
    CachingAllocatorStats counters_;
};

}  // namespace hr
