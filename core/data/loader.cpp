#include "data/loader.h"

#include <algorithm>
#include <cstring>
#include <numeric>
#include <random>

#include "base/error.h"
#include "memory/ledger.h"
#include "base/splitmix.h"

namespace hr {
namespace {

// Unbiased integer in [0, n) from the generator's raw output.
std::uint64_t uniform_below(std::mt19937_64& rng, std::uint64_t n) {
    std::uint64_t limit = ~std::uint64_t{0} - (~std::uint64_t{0} % n);  // multiple of n
    for (;;) {
        std::uint64_t r = rng();
        if (r < limit) return r % n;
    }
}

}  // namespace

DataLoader::DataLoader(const Dataset& dataset, std::int64_t batch_size, bool shuffle, std::uint64_t seed,
                       bool drop_last, float mean, float stddev, MemoryLedger* ledger, int prefetch_depth,
                       std::int64_t row_first, std::int64_t row_count)
    : dataset_(dataset),
      batch_size_(batch_size),
      shuffle_(shuffle),
      seed_(seed),
      drop_last_(drop_last),
      row_first_(row_first),
      row_count_(row_count),
      ledger_(ledger) {
    if (row_count < 0 || row_first < 0 || (row_count > 0 && (!drop_last || row_first + row_count > batch_size)))
        throw Error("data loader: rows [" + std::to_string(row_first) + ", +" + std::to_string(row_count) +
                    ") of a batch of " + std::to_string(batch_size) + " need drop_last and must lie within the batch");
    if (batch_size <= 0)
        throw InputError("batch size must be at least 1, got " + std::to_string(batch_size));
    if (!(stddev > 0.0f))
        throw InputError("normalisation std must be > 0, got " + std::to_string(stddev));
    if (prefetch_depth < 1 || prefetch_depth > 64)
        throw InputError("prefetch depth must be between 1 and 64, got " + std::to_string(prefetch_depth));
    sample_numel_ = dataset.sample_numel();
    const std::size_t held = dataset.tabular() ? dataset.features.size() : dataset.images.size();
    if (dataset.count < 0 || static_cast<std::int64_t>(dataset.labels.size()) != dataset.count ||
        static_cast<std::int64_t>(held) != dataset.count * sample_numel_)
        throw Error("dataset '" + dataset.name + "' is inconsistent: " + std::to_string(dataset.count) +
                    " samples of " + shape_str(dataset.sample_shape) + " but " + std::to_string(held) +
                    " values and " + std::to_string(dataset.labels.size()) + " labels");
    if (drop_last && dataset.count < batch_size)
        throw InputError("dataset '" + dataset.name + "' has " + std::to_string(dataset.count) +
                         " samples, fewer than one batch of " + std::to_string(batch_size) +
                         " with drop_last; lower the batch size or turn drop_last off");
    steps_ = drop_last ? dataset.count / batch_size : (dataset.count + batch_size - 1) / batch_size;
    // Same float32 operations as torchvision: img.float().div(255), then sub_(mean).div_(std).
    for (int v = 0; v < 256; ++v) {
        volatile float x = static_cast<float>(v) / 255.0f;
        volatile float c = x - mean;
        lut_[v] = c / stddev;
    }
    // Never more slots than batches in an epoch (but at least one).
    int depth = static_cast<int>(std::max<std::int64_t>(1, std::min<std::int64_t>(prefetch_depth, steps_)));
    std::int64_t cap = row_count > 0 ? row_count : std::min<std::int64_t>(batch_size, std::max<std::int64_t>(dataset.count, 1));
    slots_.resize(depth);
    for (int i = 0; i < depth; ++i) {
        slots_[i].images.assign(static_cast<std::size_t>(cap * sample_numel_), 0.0f);
        slots_[i].labels.assign(static_cast<std::size_t>(cap), 0);
        free_.push_back(i);
        if (ledger_)
            ledger_ids_.push_back(ledger_->on_alloc(slots_[i].images.size() * sizeof(float) +
                                                        slots_[i].labels.size() * sizeof(std::int64_t),
                                                    MemCategory::data));
    }
    worker_ = std::thread([this] { worker_loop(); });
}

DataLoader::~DataLoader() {
    {
        std::lock_guard<std::mutex> lock(mutex_);
        stop_ = true;
    }
    work_cv_.notify_all();
    ready_cv_.notify_all();
    if (worker_.joinable()) worker_.join();
    if (ledger_)
        for (auto id : ledger_ids_) ledger_->on_free(id);
}

std::size_t DataLoader::prefetch_bytes() const {
    std::size_t b = 0;
    for (const auto& s : slots_) b += s.images.size() * sizeof(float) + s.labels.size() * sizeof(std::int64_t);
    return b;
}

std::vector<std::int64_t> DataLoader::epoch_order(int epoch) const {
    std::vector<std::int64_t> order(static_cast<std::size_t>(dataset_.count));
    std::iota(order.begin(), order.end(), std::int64_t{0});
    if (shuffle_ && order.size() > 1) {
        std::mt19937_64 rng(splitmix64(seed_) ^ splitmix64(static_cast<std::uint64_t>(epoch) + 1));
        for (std::size_t i = order.size() - 1; i > 0; --i) {
            std::size_t j = static_cast<std::size_t>(uniform_below(rng, i + 1));
            std::swap(order[i], order[j]);
        }
    }
    return order;
}

void DataLoader::start_epoch(int epoch) {
    if (epoch < 0) throw Error("DataLoader::start_epoch: epoch must be >= 0, got " + std::to_string(epoch));
    auto order = std::make_shared<const std::vector<std::int64_t>>(epoch_order(epoch));
    {
        std::lock_guard<std::mutex> lock(mutex_);
        ++generation_;
        release_held();
        while (!ready_.empty()) {
            free_.push_back(ready_.front());
            ready_.pop_front();
        }
        order_ = std::move(order);
        next_produce_ = 0;
        consumed_ = 0;
        epoch_ = epoch;
        started_ = true;
    }
    work_cv_.notify_all();
}

void DataLoader::release_held() {
    if (held_ >= 0) free_.push_back(held_);
    held_ = -1;
}

bool DataLoader::next(Batch& out) {
    if (!started_) start_epoch(0);
    {
        std::unique_lock<std::mutex> lock(mutex_);
        release_held();  // the previous batch's slot: the worker may refill it now
        work_cv_.notify_all();
        if (error_) std::rethrow_exception(error_);
        if (consumed_ >= steps_) return false;
        ready_cv_.wait(lock, [&] { return !ready_.empty() || error_ || stop_; });
        if (error_) std::rethrow_exception(error_);
        if (ready_.empty()) return false;
        held_ = ready_.front();
        ready_.pop_front();
        ++consumed_;
    }
    // The slot is the consumer's until its next call: the worker only takes slots from free_.
    const Slot& s = slots_[held_];
    out.size = s.size;
    out.index = s.index;
    out.images = std::span<const float>(s.images.data(), static_cast<std::size_t>(s.size * sample_numel_));
    out.labels = std::span<const std::int64_t>(s.labels.data(), static_cast<std::size_t>(s.size));
    return true;
}

void DataLoader::fill(Slot& slot, const std::vector<std::int64_t>& order, std::int64_t batch_index) const {
    std::int64_t begin = batch_index * batch_size_;
    std::int64_t n = std::min(batch_size_, dataset_.count - begin);
    if (row_count_ > 0) {  // one rank's rows of the batch (drop_last: the batch is full)
        begin += row_first_;
        n = row_count_;
    }
    slot.size = n;
    slot.index = batch_index;
    if (dataset_.tabular()) {  // a table's features are standardised already (data/table.h)
        for (std::int64_t b = 0; b < n; ++b) {
            const std::int64_t sample = order[static_cast<std::size_t>(begin + b)];
            std::copy_n(dataset_.features.data() + sample * sample_numel_, sample_numel_,
                        slot.images.data() + b * sample_numel_);
            slot.labels[static_cast<std::size_t>(b)] = dataset_.labels[static_cast<std::size_t>(sample)];
        }
        return;
    }
    const std::uint8_t* src_all = dataset_.images.data();
    for (std::int64_t b = 0; b < n; ++b) {
        std::int64_t sample = order[static_cast<std::size_t>(begin + b)];
        const std::uint8_t* src = src_all + sample * sample_numel_;
        float* dst = slot.images.data() + b * sample_numel_;
        for (std::int64_t k = 0; k < sample_numel_; ++k) dst[k] = lut_[src[k]];
        slot.labels[static_cast<std::size_t>(b)] = dataset_.labels[static_cast<std::size_t>(sample)];
    }
}

void DataLoader::worker_loop() {
    for (;;) {
        int slot_index;
        std::int64_t batch_index;
        std::uint64_t gen;
        std::shared_ptr<const std::vector<std::int64_t>> order;
        {
            std::unique_lock<std::mutex> lock(mutex_);
            work_cv_.wait(lock, [&] {
                return stop_ || (started_ && !error_ && next_produce_ < steps_ && !free_.empty());
            });
            if (stop_) return;
            slot_index = free_.front();
            free_.pop_front();
            batch_index = next_produce_++;
            gen = generation_;
            order = order_;
        }
        try {
            fill(slots_[slot_index], *order, batch_index);
        } catch (...) {
            std::lock_guard<std::mutex> lock(mutex_);
            error_ = std::current_exception();
            free_.push_back(slot_index);
            ready_cv_.notify_all();
            continue;
        }
        {
            std::lock_guard<std::mutex> lock(mutex_);
            if (gen == generation_)
                ready_.push_back(slot_index);
            else
                free_.push_back(slot_index);  // a new epoch began meanwhile: discard
        }
        ready_cv_.notify_all();
    }
}

}  // namespace hr
