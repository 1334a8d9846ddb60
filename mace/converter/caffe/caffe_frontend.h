// Caffe → MACE op graph. Reads a .prototxt (V2 `layer` or V1 `layers`
// syntax; V0 nets get a pointer to Caffe's upgrade tools) and its
// .caffemodel, checks every layer, and lowers the supported ones into a
// GraphBuilder. Gaps (unknown layer types, unsupported parameter values)
// are all collected before failing, so one run reports them all.

#ifndef MACE_CONVERTER_CAFFE_CAFFE_FRONTEND_H_
#define MACE_CONVERTER_CAFFE_CAFFE_FRONTEND_H_

#include <map>
#include <string>
#include <vector>

#include "mace/converter/caffe/caffe_net.h"
#include "mace/converter/common/frontend.h"
#include "mace/converter/ir/graph_builder.h"
#include "mace/public/mace.h"

namespace mace {
namespace converter {

// Converts the net. Inputs and outputs keep Caffe's NCHW layout unless
// options ask for NHWC; outputs default to the blobs no layer consumes.
// When anything is unsupported, returns MACE_UNSUPPORTED with every gap in
// the message and in `gaps`.
MaceStatus ConvertCaffeModel(const std::string &prototxt_path,
                             const std::string &caffemodel_path,
                             const ConvertOptions &options, GraphBuilder *graph,
                             std::vector<ConversionGap> *gaps);

// Converts a net already parsed, with its blobs (ParseCaffePrototxt and
// ParseCaffeModelBlobs, caffe_net.h).
MaceStatus ConvertCaffeNet(
    const CaffeNetDef &net,
    const std::map<std::string, std::vector<CaffeBlob>> &blobs,
    const ConvertOptions &options, GraphBuilder *graph,
    std::vector<ConversionGap> *gaps);

}  // namespace converter
}  // namespace mace

#endif  // MACE_CONVERTER_CAFFE_CAFFE_FRONTEND_H_
