#include "mace/core/tensor.h"

#include <algorithm>
#include <cstring>
#include <limits>
#include <new>
#include <sstream>

#include "mace/core/aligned_buffer.h"
#include "mace/core/status.h"

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

bool HasValidSize(const Shape &shape, DataType dtype) {
  // Compared in elements: the byte count of a huge shape would overflow.
  const int64_t element_bytes = DataTypeSize(dtype);
  const int64_t elements = ShapeElementCount(shape);
  return element_bytes != 0 && elements >= 0 &&
         elements <= kMaxTensorBytes / element_bytes;
}

bool HasValidSize(const Tensor &tensor) {
  return HasValidSize(tensor.shape(), tensor.dtype());
}

int64_t Tensor::bytes() const { return size() * DataTypeSize(dtype_); }

MaceStatus Tensor::AllocateOwned() {
  // A tensor larger than the machine fails here rather than in the kernel's
  // lazy page-in, and a failed allocation is an error, not an exception
  // through the library's callers.
  const bool valid = HasValidSize(*this);
  const int64_t n = std::max<int64_t>(valid ? bytes() : 0, 1);
  if (!valid || static_cast<uint64_t>(n) > PhysicalMemoryBytes()) {
    return OutOfResources("tensor '", name_, "' of shape ",
                          ShapeToString(shape_),
                          " needs more memory than this machine has");
  }
  owned_.reset(new (std::nothrow) uint8_t[n]);
  if (owned_ == nullptr) {
    return OutOfResources("cannot allocate ", n, " bytes for tensor '", name_,
                          "'");
  }
  std::memset(owned_.get(), 0, n);
  data_ = owned_.get();
  return MaceStatus::MACE_SUCCESS;
}

}  // namespace mace
