// A named n-dimensional array. The engine owns the metadata; the bytes live
// in the arena, in the (mapped) weights, in a user buffer, or in the
// tensor's own storage for constants decoded at init.

#ifndef MACE_CORE_TENSOR_H_
#define MACE_CORE_TENSOR_H_

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "mace/core/types.h"
#include "mace/public/mace.h"

namespace mace {

using Shape = std::vector<int64_t>;

// Element count of a shape; -1 when a dim is negative or the count
// overflows int64.
int64_t ShapeElementCount(const Shape &shape);
std::string ShapeToString(const Shape &shape);

// Larger tensors than this (256 GiB) are a corrupt model, not a real one.
constexpr int64_t kMaxTensorBytes = int64_t{1} << 38;

class Tensor;
// Whether an op's output can be a tensor of the engine: a valid shape, an
// element type with a size, at most kMaxTensorBytes.
bool HasValidSize(const Tensor &tensor);
// The same for a tensor not made yet (a model input, say).
bool HasValidSize(const Shape &shape, DataType dtype);

class Tensor {
 public:
  Tensor() = default;
  Tensor(std::string name, DataType dtype, Shape shape);

  const std::string &name() const { return name_; }
  DataType dtype() const { return dtype_; }
  const Shape &shape() const { return shape_; }
  int rank() const { return static_cast<int>(shape_.size()); }
  // Negative i counts from the back.
  int64_t dim(int i) const {
    return shape_[i < 0 ? i + static_cast<int>(shape_.size()) : i];
  }
  int64_t size() const;
  int64_t bytes() const;

  void set_name(const std::string &name) { name_ = name; }
  void set_dtype(DataType dtype) { dtype_ = dtype; }
  void set_shape(const Shape &shape) { shape_ = shape; }

  bool has_data() const { return data_ != nullptr; }
  template <typename T>
  const T *data() const {
    return static_cast<const T *>(data_);
  }
  template <typename T>
  T *mutable_data() {
    return static_cast<T *>(data_);
  }
  const void *raw_data() const { return data_; }
  void *raw_mutable_data() { return data_; }

  // Points the tensor at memory it does not own.
  void BindData(void *data) { data_ = data; }
  // Gives the tensor its own zeroed storage of bytes() (constants, staging);
  // MACE_OUT_OF_RESOURCES, naming the tensor, when the machine cannot.
  MaceStatus AllocateOwned();
  // A constant's data is known at init and never written at run time.
  bool is_constant() const { return is_constant_; }
  void set_constant(bool constant) { is_constant_ = constant; }

  // Asymmetric quantization of uint8 (or int32) data, as MACE's tensors:
  // real = scale * (q - zero_point). Set from ConstTensor.scale/zero_point
  // for weights and by Quantize for its output; scale 0 means unknown.
  float scale() const { return scale_; }
  int32_t zero_point() const { return zero_point_; }
  void set_scale(float scale) { scale_ = scale; }
  void set_zero_point(int32_t zero_point) { zero_point_ = zero_point; }

 private:
  std::string name_;
  DataType dtype_ = DT_FLOAT;
  Shape shape_;
  void *data_ = nullptr;
  std::unique_ptr<uint8_t[]> owned_;
  bool is_constant_ = false;
  float scale_ = 0.0f;
  int32_t zero_point_ = 0;
};

}  // namespace mace

#endif  // MACE_CORE_TENSOR_H_
