#pragma once
// An allocator that hands out no memory: it records every request in its ledger (category, layer,
// bytes) exactly as a real allocator would. The planner builds a run's whole training state on it,
// so its prediction comes from the same code that allocates for real.
#include "memory/allocator.h"

namespace hr {

class CountingAllocator : public Allocator {
public:
    explicit CountingAllocator(Device device, std::shared_ptr<MemoryLedger> ledger = std::make_shared<MemoryLedger>())
        : Allocator(std::move(ledger)), device_(device) {}
    Device device() const override { return device_; }
    std::shared_ptr<Storage> allocate(std::size_t bytes, MemCategory category, int layer = -1) override {
        std::uint64_t id = ledger_->on_alloc(bytes, category, layer);
        return std::make_shared<Storage>(nullptr, bytes, device_, this, id, category, layer);
    }

protected:
    void release(void*, std::size_t) override {}

private:
    Device device_;
};

}  // namespace hr
