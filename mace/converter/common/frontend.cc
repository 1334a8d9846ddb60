#include "mace/converter/common/frontend.h"

#include "mace/converter/caffe/caffe_frontend.h"
#include "mace/converter/onnx/onnx_frontend.h"
#include "mace/converter/tensorflow/tf_frontend.h"
#include "mace/core/status.h"

namespace mace {
namespace converter {

bool SourceIsNchw(const std::string &platform) {
  return platform != "tensorflow";
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
