// TensorFlow TensorProto → converter constants. The converter graph holds
// float32 and int32 only: floating types (float, double, half, bfloat16)
// become float32; integer and bool types become int32 (int64 values are
// clamped to the int32 range, which keeps "slice to the end" sentinels).

#ifndef MACE_CONVERTER_TENSORFLOW_TF_TENSOR_H_
#define MACE_CONVERTER_TENSORFLOW_TF_TENSOR_H_

#include <cstdint>
#include <string>
#include <vector>

#include "mace/converter/tensorflow/tf_graph.pb.h"
#include "mace/core/tensor.h"
#include "mace/public/mace.h"

namespace mace {
namespace converter {

struct DecodedTfTensor {
  Shape shape;
  bool is_int = false;
  std::vector<float> floats;
  std::vector<int32_t> ints;
};

// The largest constant the converter accepts (elements): bigger ones are
// corrupted shapes, not weights.
constexpr int64_t kMaxTfTensorElements = int64_t{1} << 28;

// `what` names the tensor in errors ("node 'w' attribute 'value'").
MaceStatus DecodeTfTensor(const tf::TensorProto &proto, const std::string &what,
                          DecodedTfTensor *tensor);

// Whether a TensorFlow element type is held as int32 (true) or float32
// (false) in the converter graph; strings, complex and resource types are
// unsupported.
MaceStatus TfTypeIsInt(int type, const std::string &what, bool *is_int);

const char *TfTypeName(int type);

}  // namespace converter
}  // namespace mace

#endif  // MACE_CONVERTER_TENSORFLOW_TF_TENSOR_H_
