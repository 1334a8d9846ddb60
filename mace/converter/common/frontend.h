// What every frontend (ONNX, TensorFlow, Caffe) shares: the options of a
// conversion and the gaps `mace convert --check` reports. A frontend reads
// its source files, checks every node, and lowers the supported ones into a
// GraphBuilder; gaps are collected before failing, so one run lists them all.

#ifndef MACE_CONVERTER_COMMON_FRONTEND_H_
#define MACE_CONVERTER_COMMON_FRONTEND_H_

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <map>
#include <string>
#include <vector>

#include "mace/converter/ir/graph_builder.h"
#include "mace/core/tensor.h"
#include "mace/public/mace.h"

namespace mace {
namespace converter {

struct ConvertOptions {
  // Fixed shapes for inputs (required for dynamic dimensions), in the
  // source framework's own layout.
  std::map<std::string, Shape> input_shapes;
  // 4-D inputs / outputs in NHWC instead of the source's own layout (ONNX
  // and Caffe are NCHW; TensorFlow is NHWC already).
  bool inputs_nhwc = false;
  bool outputs_nhwc = false;
  // Inputs frozen to these values (for inputs the converter needs at
  // conversion time: shapes, axes, scales); they stop being model inputs.
  struct ConstantInput {
    Shape shape;
    bool is_int = false;
    std::vector<float> floats;
    std::vector<int32_t> ints;
  };
  std::map<std::string, ConstantInput> constant_inputs;
  // Graph outputs to keep (TensorFlow graphs name none; ONNX and Caffe
  // default to the model's own outputs when empty).
  std::vector<std::string> output_names;
};

// One thing the converter cannot do, for the --check report.
struct ConversionGap {
  std::string op_type;
  std::string node;
  std::string reason;
};

// "2 unsupported items:" and a line for each gap: the message of a
// conversion that failed on them.
std::string GapReport(const std::vector<ConversionGap> &gaps);

// A model in its source framework: `platform` is onnx, tensorflow or caffe;
// `weight_file` is Caffe's .caffemodel (the others keep weights in
// `model_file`, or ONNX in external data beside it).
struct SourceModel {
  std::string platform;
  std::string model_file;
  std::string weight_file;
};

// Whether the platform's 4-D tensors are NCHW (ONNX, Caffe) rather than
// NHWC like mace's own (TensorFlow).
bool SourceIsNchw(const std::string &platform);

// Transpose permutations of a rank-r tensor: channel second to channel
// last, [0, 2, 3, ..., r-1, 1], and back, [0, r-1, 1, 2, ..., r-2].
std::vector<int64_t> ChannelLastPerm(int rank);
std::vector<int64_t> ChannelSecondPerm(int rank);

// `value` truncated toward zero and clamped to Int's range, NaN to 0: a
// float from a model read as an integer, where a plain cast of an
// out-of-range value is undefined.
template <typename Int>
Int SaturatingCast(float value) {
  constexpr Int kMin = std::numeric_limits<Int>::min();
  constexpr Int kMax = std::numeric_limits<Int>::max();
  if (std::isnan(value)) return 0;
  if (value <= static_cast<float>(kMin)) return kMin;
  // float(kMax) rounds up to a power of two, which no Int holds.
  if (value >= static_cast<float>(kMax)) return kMax;
  return static_cast<Int>(value);
}

// `value` clamped to int32's range: a model's int64 value (a shape, an
// index) held in the converter's int32 tensors.
inline int32_t ClampToInt32(int64_t value) {
  return static_cast<int32_t>(std::min<int64_t>(
      std::max<int64_t>(value, std::numeric_limits<int32_t>::min()),
      std::numeric_limits<int32_t>::max()));
}

// The values of a constant int32 or float tensor, converted: what the
// frontends read shapes, axes and scales from (floats truncate to ints).
void ConstantValues(const Tensor &tensor, std::vector<int64_t> *values);
void ConstantValues(const Tensor &tensor, std::vector<float> *values);

// Adds an input frozen by ConvertOptions::constant_inputs to `graph` as a
// constant of the input's own type (int32 when `is_int`), its values
// converted; an error when they do not fill the given shape.
MaceStatus AddConstantInput(const std::string &name,
                            const ConvertOptions::ConstantInput &value,
                            bool is_int, GraphBuilder *graph);

// Runs the platform's frontend. Unknown platforms and frontends this build
// lacks are errors that say so.
MaceStatus ConvertSourceModel(const SourceModel &source,
                              const ConvertOptions &options,
                              GraphBuilder *graph,
                              std::vector<ConversionGap> *gaps);

}  // namespace converter
}  // namespace mace

#endif  // MACE_CONVERTER_COMMON_FRONTEND_H_
