// ONNX → MACE op graph. Reads a ModelProto (opsets 7 to 21, external data
// beside the model), checks every node, and lowers the supported ones into a
// GraphBuilder. Gaps (unknown ops, unsupported attribute values, opsets,
// domains) are all collected before failing, so one run reports them all.

#ifndef MACE_CONVERTER_ONNX_ONNX_FRONTEND_H_
#define MACE_CONVERTER_ONNX_ONNX_FRONTEND_H_

#include <map>
#include <cstdint>
#include <string>
#include <vector>

#include "mace/converter/common/frontend.h"
#include "mace/converter/ir/graph_builder.h"
#include "mace/core/tensor.h"
#include "mace/public/mace.h"

namespace mace {
namespace onnx {
class ModelProto;
}  // namespace onnx

namespace converter {

// Converts `model_path`. When anything is unsupported, returns
// MACE_UNSUPPORTED with every gap in the message and in `gaps`.
MaceStatus ConvertOnnxModel(const std::string &model_path,
                            const ConvertOptions &options,
                            GraphBuilder *graph,
                            std::vector<ConversionGap> *gaps);

// Converts a parsed model, which errors call `label` (its path); external
// data is read from `model_dir`.
MaceStatus ConvertOnnxModelProto(const onnx::ModelProto &model,
                                 const std::string &label,
                                 const std::string &model_dir,
                                 const ConvertOptions &options,
                                 GraphBuilder *graph,
                                 std::vector<ConversionGap> *gaps);

constexpr int kMinOnnxOpset = 7;
// Opsets 22 to 26 changed only the element types the ops we lower accept
// (checked against onnx 1.21's schemas; Cast's new round_mode only concerns
// float8), so their models convert like opset 21 ones.
constexpr int kMaxOnnxOpset = 26;

}  // namespace converter
}  // namespace mace

#endif  // MACE_CONVERTER_ONNX_ONNX_FRONTEND_H_
