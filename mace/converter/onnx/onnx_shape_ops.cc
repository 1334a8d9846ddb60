#include "mace/converter/onnx/onnx_lowering.h"

namespace mace {
namespace converter {

void RegisterOnnxShapeOps(OnnxLoweringTable *table) {}

}  // namespace converter
}  // namespace mace
