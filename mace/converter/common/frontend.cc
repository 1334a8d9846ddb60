#include "mace/converter/common/frontend.h"

#include <algorithm>
#include <type_traits>

#include "mace/converter/caffe/caffe_frontend.h"
#include "mace/converter/onnx/onnx_frontend.h"
#include "mace/converter/tensorflow/tf_frontend.h"
#include "mace/core/status.h"

namespace mace {
namespace converter {

bool SourceIsNchw(const std::string &platform) {
  return platform != "tensorflow";
}

namespace {

template <typename T, typename Stored>
void AssignConverted(const Stored *data, int64_t count,
                     std::vector<T> *values) {
  values->resize(static_cast<size_t>(count));
  std::transform(data, data + count, values->begin(), [](Stored v) {
    if constexpr (std::is_integral_v<T> && std::is_floating_point_v<Stored>) {
      return SaturatingCast<T>(v);
    } else {
      return static_cast<T>(v);
    }
  });
}

template <typename T>
void ConvertedValues(const Tensor &tensor, std::vector<T> *values) {
  if (tensor.dtype() == DT_INT32) {
    AssignConverted(tensor.data<int32_t>(), tensor.size(), values);
  } else {
    AssignConverted(tensor.data<float>(), tensor.size(), values);
  }
}

}  // namespace

std::string GapReport(const std::vector<ConversionGap> &gaps) {
  std::string report = StrCat(gaps.size(), " unsupported item",
                              gaps.size() == 1 ? "" : "s", ":");
  for (const ConversionGap &gap : gaps) {
    report += "\n  " + gap.op_type + " '" + gap.node + "': " + gap.reason;
  }
  return report;
}

std::vector<int64_t> ChannelLastPerm(int rank) {
  std::vector<int64_t> perm{0};
  for (int i = 2; i < rank; ++i) perm.push_back(i);
  perm.push_back(1);
  return perm;
}

std::vector<int64_t> ChannelSecondPerm(int rank) {
  std::vector<int64_t> perm{0, rank - 1};
  for (int i = 1; i < rank - 1; ++i) perm.push_back(i);
  return perm;
}

void ConstantValues(const Tensor &tensor, std::vector<int64_t> *values) {
  ConvertedValues(tensor, values);
}

void ConstantValues(const Tensor &tensor, std::vector<float> *values) {
  ConvertedValues(tensor, values);
}

MaceStatus AddConstantInput(const std::string &name,
                            const ConvertOptions::ConstantInput &value,
                            bool is_int, GraphBuilder *graph) {
  const size_t given = value.is_int ? value.ints.size() : value.floats.size();
  const int64_t needed = ShapeElementCount(value.shape);
  if (needed < 0 || given != static_cast<size_t>(needed)) {
    return InvalidArgs("constant input '", name, "' has ", given,
                       " values, its shape ", ShapeToString(value.shape),
                       " needs ", needed < 0 ? std::string("a valid shape")
                                             : std::to_string(needed));
  }
  if (is_int) {
    std::vector<int32_t> ints = value.ints;
    if (!value.is_int) {
      ints.resize(value.floats.size());
      std::transform(value.floats.begin(), value.floats.end(), ints.begin(),
                     SaturatingCast<int32_t>);
    }
    graph->AddConstantInt(name, value.shape, ints);
  } else {
    std::vector<float> floats = value.floats;
    if (value.is_int) floats.assign(value.ints.begin(), value.ints.end());
    graph->AddConstant(name, value.shape, floats);
  }
  return MaceStatus::MACE_SUCCESS;
}

MaceStatus ConvertSourceModel(const SourceModel &source,
                              const ConvertOptions &options,
                              GraphBuilder *graph,
                              std::vector<ConversionGap> *gaps) {
  if (source.platform == "onnx") {
    return ConvertOnnxModel(source.model_file, options, graph, gaps);
  }
  if (source.platform == "tensorflow") {
    return ConvertTensorflowModel(source.model_file, options, graph, gaps);
  }
  if (source.platform == "caffe") {
    return ConvertCaffeModel(source.model_file, source.weight_file, options,
                             graph, gaps);
  }
  return InvalidArgs("platform '", source.platform,
                     "' should be onnx, tensorflow or caffe");
}

}  // namespace converter
}  // namespace mace
