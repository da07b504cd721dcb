#pragma once
// Tensor = shape + dtype + device + a contiguous view into a Storage (row-major, outermost first).
#include <cstddef>
#include <memory>

#include "base/dtype.h"
#include "base/shape.h"
#include "memory/allocator.h"

namespace hr {

class Tensor {
public:
    Tensor() = default;
    Tensor(std::shared_ptr<Storage> storage, std::size_t byte_offset, Shape shape, DType dtype);

    // A new zero-filled tensor from `alloc`, recorded in its ledger under category/layer.
    static Tensor empty(Allocator& alloc, const Shape& shape, DType dtype, MemCategory category, int layer = -1);

    bool defined() const { return storage_ != nullptr; }
    const Shape& shape() const { return shape_; }
    std::int64_t dim(int i) const { return shape_[i < 0 ? shape_.size() + i : i]; }
    int ndim() const { return static_cast<int>(shape_.size()); }
    DType dtype() const { return dtype_; }
    Device device() const;
    std::int64_t numel() const { return shape_numel(shape_); }
    std::size_t nbytes() const { return static_cast<std::size_t>(numel()) * dtype_size(dtype_); }
    std::size_t byte_offset() const { return offset_; }
    const std::shared_ptr<Storage>& storage() const { return storage_; }

    void* raw() const { return static_cast<char*>(storage_->data()) + offset_; }
    template <class T>
    T* data() const {
        return reinterpret_cast<T*>(raw());
    }

    // Same memory, new shape (numel must match).
    Tensor reshape(const Shape& shape) const;
    // A contiguous sub-range: elements [element_offset, element_offset + numel(shape)).
    Tensor view(std::int64_t element_offset, const Shape& shape) const;
    // Rows [begin, end) along dimension 0.
    Tensor slice0(std::int64_t begin, std::int64_t end) const;

private:
    std::shared_ptr<Storage> storage_;
    std::size_t offset_ = 0;
    Shape shape_;
    DType dtype_ = DType::f32;
};

}  // namespace hr
