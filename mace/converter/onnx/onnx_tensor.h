// Decodes an ONNX TensorProto (typed fields, raw_data, or external data
// beside the model) into float32 or int32 values.

#ifndef MACE_CONVERTER_ONNX_ONNX_TENSOR_H_
#define MACE_CONVERTER_ONNX_ONNX_TENSOR_H_

#include <cstdint>
#include <string>
#include <vector>

#include "mace/converter/onnx/onnx.pb.h"
#include "mace/core/tensor.h"
#include "mace/public/mace.h"

namespace mace {
namespace converter {

struct DecodedTensor {
  Shape shape;
  bool is_int = false;  // int types (and bool) → ints, float types → floats
  std::vector<float> floats;
  std::vector<int32_t> ints;
};

// `model_dir` locates external data files. Integer values outside the
// int32 range are clamped (ONNX writes INT64_MAX for "to the end").
MaceStatus DecodeOnnxTensor(const onnx::TensorProto &proto,
                            const std::string &model_dir,
                            DecodedTensor *tensor);

// Whether an ONNX element type maps to int32 (true) or float32 (false);
// an error for types the converter does not handle (strings, complex).
MaceStatus OnnxElemTypeIsInt(int elem_type, const std::string &what,
                             bool *is_int);

// Bytes of one element in raw_data; 0 for types without a fixed size
// (strings, complex) and unknown ones.
int OnnxElemSize(int elem_type);

}  // namespace converter
}  // namespace mace

#endif  // MACE_CONVERTER_ONNX_ONNX_TENSOR_H_
