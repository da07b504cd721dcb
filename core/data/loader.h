#pragma once
// DataLoader: turns a Dataset into normalised f32 batches, prepared ahead of time by a prefetch
// thread into a bounded pool of fixed-size buffers while the trainer computes.
//
// Order: with shuffle, epoch e visits the samples in a permutation made by a Fisher-Yates shuffle
// driven by std::mt19937_64 seeded with splitmix64(seed) ^ splitmix64(e + 1) and an unbiased
// rejection draw over its raw 64-bit output (so the order is the same on every platform and
// standard library). Without shuffle, samples come in dataset order. Every sample is visited
// exactly once per epoch; with drop_last the final incomplete batch is skipped.
//
// Normalisation: x = (float(u8) / 255.0f - mean) / std in float32, exactly as torchvision's
// ToTensor() + Normalize((mean,), (std,)). A table (Dataset::tabular) is copied as it is: its features
// are standardised when it is read (data/table.h).
//
// Memory: the prefetch pool (prefetch_depth slots of batch_size samples, images + labels) is
// allocated once and recorded in the optional MemoryLedger under MemCategory::data; the figure is
// exact and stays constant for the loader's lifetime. A Batch is a view of the slot it came from (no copy:
// a copy per batch was memory that grew with the batch outside the ledger, issue 46 item 7); the consumer
// holds that slot until its next call of next() or start_epoch(), so at most prefetch_depth - 1 batches are
// prepared ahead of the one in use.
//
// Threading: next() and start_epoch() are called from one consumer thread. start_epoch() may be
// called at any time (also mid-epoch: batches not yet consumed are dropped). The destructor stops
// and joins the prefetch thread, wherever the consumer stopped. The Dataset must outlive the loader.
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <exception>
#include <memory>
#include <mutex>
#include <span>
#include <thread>
#include <vector>

#include "data/dataset.h"

namespace hr {

class MemoryLedger;

// Valid until the loader's next call of next() or start_epoch() (or its end).
struct Batch {
    std::span<const float> images;         // (B, C, H, W) normalised f32
    std::span<const std::int64_t> labels;  // (B)
    std::int64_t size = 0;             // B: batch_size, or less for the last batch without drop_last
    std::int64_t index = 0;            // batch number within the epoch, from 0
};

class DataLoader {
public:
    DataLoader(const Dataset& dataset, std::int64_t batch_size, bool shuffle, std::uint64_t seed,
               bool drop_last, float mean, float stddev, MemoryLedger* ledger = nullptr,
               int prefetch_depth = 3, std::int64_t row_first = 0, std::int64_t row_count = 0);
    // The loader keeps a reference to the dataset: a temporary would dangle.
    DataLoader(Dataset&&, std::int64_t, bool, std::uint64_t, bool, float, float, MemoryLedger* = nullptr,
               int = 3) = delete;
    ~DataLoader();
    DataLoader(const DataLoader&) = delete;
    DataLoader& operator=(const DataLoader&) = delete;

    // Begins epoch `epoch` (any number >= 0); drops what was prefetched for the previous one.
    void start_epoch(int epoch);
    // The next batch of the current epoch; false at the end of the epoch. Starts epoch 0 if no
    // epoch was started. Rethrows an error met by the prefetch thread.
    bool next(Batch& out);

    // row_count > 0 (one rank of several, docs/distributed.md): each batch is still cut from the epoch's
    // order in batch_size pieces, but only its rows [row_first, row_first + row_count) are prepared and
    // handed out (Batch::size = row_count; needs drop_last), so every rank sees the same order and the
    // buffers hold this rank's share only.
    std::int64_t steps_per_epoch() const { return steps_; }
    std::int64_t batch_size() const { return batch_size_; }
    std::int64_t sample_count() const { return dataset_.count; }
    int epoch() const { return epoch_; }
    // Bytes held by the prefetch pool (what the ledger records under data).
    std::size_t prefetch_bytes() const;
    // The sample order of an epoch (what the loader uses); exposed for tests and reproducibility.
    std::vector<std::int64_t> epoch_order(int epoch) const;

private:
    struct Slot {
        std::vector<float> images;
        std::vector<std::int64_t> labels;
        std::int64_t size = 0;
        std::int64_t index = 0;
    };
    void worker_loop();
    void release_held();  // the consumer's slot back to the free ones (under mutex_)
    void fill(Slot& slot, const std::vector<std::int64_t>& order, std::int64_t batch_index) const;

    const Dataset& dataset_;
    std::int64_t batch_size_;
    bool shuffle_;
    std::uint64_t seed_;
    bool drop_last_;
    std::int64_t row_first_ = 0, row_count_ = 0;
    std::int64_t steps_ = 0;
    std::int64_t sample_numel_ = 0;
    float lut_[256];  // normalised value of each u8
    MemoryLedger* ledger_;
    std::vector<std::uint64_t> ledger_ids_;

    std::vector<Slot> slots_;
    mutable std::mutex mutex_;
    std::condition_variable work_cv_;   // worker waits: free slot + work, or stop
    std::condition_variable ready_cv_;  // consumer waits: ready slot or error
    std::deque<int> free_;              // slot indices
    std::deque<int> ready_;             // slot indices, in batch order
    int held_ = -1;                     // the slot the consumer's Batch views, if any
    std::shared_ptr<const std::vector<std::int64_t>> order_;
    std::uint64_t generation_ = 0;      // bumped by start_epoch; stale work is discarded
    bool started_ = false;
    bool stop_ = false;
    std::int64_t next_produce_ = 0;
    std::int64_t consumed_ = 0;
    int epoch_ = -1;
    std::exception_ptr error_;
    std::thread worker_;
};

}  // namespace hr
