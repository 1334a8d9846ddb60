#include "mace/converter/onnx/onnx_lowering.h"

namespace mace {
namespace converter {

void RegisterOnnxReduceOps(OnnxLoweringTable *table) {}

}  // namespace converter
}  // namespace mace
