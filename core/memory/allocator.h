#pragma once
// Allocator interface and the tracking CPU allocator. Every Storage reports to a MemoryLedger on
// creation and destruction, tagged with its category and layer.
#include <cstddef>
#include <memory>
#include <string>

#include "base/device.h"
#include "base/error.h"
#include "memory/category.h"
#include "memory/ledger.h"

namespace hr {

class Allocator;

// Thrown when an allocation would exceed the device's memory (or the run's memory limit). Carries what
// was asked and the ledger at that moment, so the caller can say which category and layer hold the most.
class OutOfMemory : public Error {
public:
    OutOfMemory(const std::string& message, std::size_t requested, MemCategory category, int layer,
                std::size_t limit, LedgerSnapshot snapshot)
        : Error(message), requested(requested), category(category), layer(layer), limit(limit),
          snapshot(std::move(snapshot)) {}
    std::size_t requested;
    MemCategory category;
    int layer;
    std::size_t limit;        // the capacity that was exceeded
    LedgerSnapshot snapshot;  // live bytes when it happened
};

// One allocation. Freed (and removed from the ledger) when the last reference goes.
class Storage {
public:
    Storage(void* data, std::size_t bytes, Device device, Allocator* owner, std::uint64_t ledger_id,
            MemCategory category, int layer);
    ~Storage();
    Storage(const Storage&) = delete;
    Storage& operator=(const Storage&) = delete;

    void* data() const { return data_; }
    std::size_t bytes() const { return bytes_; }
    Device device() const { return device_; }
    MemCategory category() const { return category_; }
    int layer() const { return layer_; }

private:
    void* data_;
    std::size_t bytes_;
    Device device_;
    Allocator* owner_;
    std::uint64_t ledger_id_;
    MemCategory category_;
    int layer_;
};

class Allocator {
public:
    virtual ~Allocator() = default;
    virtual Device device() const = 0;
    // Throws hr::Error (naming bytes, category and layer) when memory cannot be had.
    virtual std::shared_ptr<Storage> allocate(std::size_t bytes, MemCategory category, int layer = -1) = 0;
    MemoryLedger& ledger() { return *ledger_; }
    const MemoryLedger& ledger() const { return *ledger_; }

protected:
    explicit Allocator(std::shared_ptr<MemoryLedger> ledger) : ledger_(std::move(ledger)) {}
    friend class Storage;
    virtual void release(void* data, std::size_t bytes) = 0;
    std::shared_ptr<MemoryLedger> ledger_;
};

// Host memory, 64-byte aligned, zero-initialised. Counts every byte it hands out in the ledger.
class CpuAllocator : public Allocator {
public:
    explicit CpuAllocator(std::shared_ptr<MemoryLedger> ledger = std::make_shared<MemoryLedger>());
    Device device() const override { return Device::cpu(); }
    std::shared_ptr<Storage> allocate(std::size_t bytes, MemCategory category, int layer = -1) override;
    // A cap on live bytes (0: none), like a smaller card: allocations past it throw OutOfMemory.
    void set_limit(std::size_t bytes) { limit_ = bytes; }
    std::size_t limit() const { return limit_; }

protected:
    void release(void* data, std::size_t bytes) override;

private:
    std::size_t limit_ = 0;
};

std::string format_bytes(std::size_t bytes);  // "1.50 MiB"

}  // namespace hr
