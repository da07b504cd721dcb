#include "tensor/tensor.h"

#include "base/error.h"

namespace hr {

Tensor::Tensor(std::shared_ptr<Storage> storage, std::size_t byte_offset, Shape shape, DType dtype)
    : storage_(std::move(storage)), offset_(byte_offset), shape_(std::move(shape)), dtype_(dtype) {
    if (storage_ && offset_ + nbytes() > storage_->bytes())
        throw Error("internal: tensor view " + shape_str(shape_) + " runs past its allocation");
}

Tensor Tensor::empty(Allocator& alloc, const Shape& shape, DType dtype, MemCategory category, int layer) {
    std::size_t bytes = static_cast<std::size_t>(shape_numel(shape)) * dtype_size(dtype);
    return Tensor(alloc.allocate(bytes, category, layer), 0, shape, dtype);
}

Device Tensor::device() const { return storage_ ? storage_->device() : Device::cpu(); }

Tensor Tensor::reshape(const Shape& shape) const {
    if (shape_numel(shape) != numel())
        throw Error("internal: cannot reshape " + shape_str(shape_) + " to " + shape_str(shape));
    Tensor t = *this;
    t.shape_ = shape;
    return t;
}

Tensor Tensor::view(std::int64_t element_offset, const Shape& shape) const {
    return Tensor(storage_, offset_ + static_cast<std::size_t>(element_offset) * dtype_size(dtype_), shape, dtype_);
}

Tensor Tensor::slice0(std::int64_t begin, std::int64_t end) const {
    Shape s = shape_;
    std::int64_t row = shape_.empty() ? 1 : numel() / shape_[0];
    s[0] = end - begin;
    return view(begin * row, s);
}

}  // namespace hr
