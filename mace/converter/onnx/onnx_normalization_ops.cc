#include "mace/converter/onnx/onnx_lowering.h"

namespace mace {
namespace converter {

void RegisterOnnxNormalizationOps(OnnxLoweringTable *table) {}

}  // namespace converter
}  // namespace mace
