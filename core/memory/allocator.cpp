#include "memory/allocator.h"

#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "base/error.h"

namespace hr {

Storage::Storage(void* data, std::size_t bytes, Device device, Allocator* owner, std::uint64_t ledger_id,
                 MemCategory category, int layer)
    : data_(data), bytes_(bytes), device_(device), owner_(owner), ledger_id_(ledger_id),
      category_(category), layer_(layer) {}

Storage::~Storage() {
    if (owner_) {
        owner_->ledger_->on_free(ledger_id_);
        owner_->release(data_, bytes_);
    }
}

CpuAllocator::CpuAllocator(std::shared_ptr<MemoryLedger> ledger) : Allocator(std::move(ledger)) {}

std::shared_ptr<Storage> CpuAllocator::allocate(std::size_t bytes, MemCategory category, int layer) {
    if (limit_ > 0 && ledger_->live_total() + bytes > limit_) {
        LedgerSnapshot snap = ledger_->snapshot();
        throw OutOfMemory("out of memory: " + format_bytes(bytes) + " for " + category_name(category) +
                              (layer >= 0 ? " of layer " + std::to_string(layer) : std::string()) + " with " +
                              format_bytes(snap.live_total) + " of the " + format_bytes(limit_) + " limit in use",
                          bytes, category, layer, limit_, snap);
    }
    std::size_t rounded = ((bytes + 63) / 64) * 64;
    if (rounded == 0) rounded = 64;
    void* p = std::aligned_alloc(64, rounded);
    if (!p) {
        throw Error("out of host memory: could not allocate " + format_bytes(bytes) + " for " +
                    category_name(category) + (layer >= 0 ? " of layer " + std::to_string(layer) : std::string()) +
                    "; lower the batch size or pick a memory strategy (headroom plan --budget ...)");
    }
    std::memset(p, 0, rounded);
    std::uint64_t id = ledger_->on_alloc(bytes, category, layer);
    return std::make_shared<Storage>(p, bytes, Device::cpu(), this, id, category, layer);
}

void CpuAllocator::release(void* data, std::size_t) { std::free(data); }

std::string format_bytes(std::size_t bytes) {
    const char* units[] = {"B", "KiB", "MiB", "GiB", "TiB"};
    double v = static_cast<double>(bytes);
    int u = 0;
    while (v >= 1024.0 && u < 4) {
        v /= 1024.0;
        ++u;
    }
    char buf[32];
    if (u == 0)
        std::snprintf(buf, sizeof buf, "%zu B", bytes);
    else
        std::snprintf(buf, sizeof buf, "%.2f %s", v, units[u]);
    return buf;
}

}  // namespace hr
