#include "mace/converter/onnx/onnx_lowering.h"

namespace mace {
namespace converter {

void RegisterOnnxTensorOps(OnnxLoweringTable *table) {}

}  // namespace converter
}  // namespace mace
