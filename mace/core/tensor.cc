#include "mace/core/tensor.h"

#include <cstring>
#include <limits>
#include <sstream>

namespace mace {

int64_t ShapeElementCount(const Shape &shape) {
  // Overflow of the non-zero dims is an error even when another dim is 0:
  // ops multiply partial products of dims, not only the total.
  int64_t count = 1;
  bool has_zero = false;
  for (int64_t d : shape) {
    if (d < 0) return -1;
    if (d == 0) {
      has_zero = true;
      continue;
    }
    if (count > std::numeric_limits<int64_t>::max() / d) return -1;
    count *= d;
  }
  return has_zero ? 0 : count;
}

std::string ShapeToString(const Shape &shape) {
  std::ostringstream out;
  out << "[";
  for (size_t i = 0; i < shape.size(); ++i) {
    out << (i ? "," : "") << shape[i];
  }
  out << "]";
  return out.str();
}

Tensor::Tensor(std::string name, DataType dtype, Shape shape)
    : name_(std::move(name)), dtype_(dtype), shape_(std::move(shape)) {}

int64_t Tensor::size() const { return ShapeElementCount(shape_); }

int64_t Tensor::bytes() const { return size() * DataTypeSize(dtype_); }

void Tensor::AllocateOwned() {
  const int64_t n = bytes() > 0 ? bytes() : 1;
  owned_.reset(new uint8_t[n]);
  std::memset(owned_.get(), 0, n);
  data_ = owned_.get();
}

}  // namespace mace
