#include "mace/converter/onnx/onnx_lowering.h"

namespace mace {
namespace converter {

void RegisterOnnxActivationOps(OnnxLoweringTable *table) {}

}  // namespace converter
}  // namespace mace
