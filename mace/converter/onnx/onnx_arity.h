// How many inputs each ONNX op the converter lowers may have, from the
// ONNX operator schemas: the fewest any opset from kMinOnnxOpset to
// kMaxOnnxOpset requires and the most any accepts. The frontend checks a
// node against it before lowering, so that no lowering reads an input the
// node does not have; the lowerings check what depends on the opset.

#ifndef MACE_CONVERTER_ONNX_ONNX_ARITY_H_
#define MACE_CONVERTER_ONNX_ONNX_ARITY_H_

#include <string>

namespace mace {
namespace converter {

struct OnnxArity {
  int min_inputs = 0;
  int max_inputs = 0;
};

// Variadic ops (Concat, Sum, ...) have no most.
constexpr int kOnnxVariadic = 1 << 30;

// The arity of `op_type`; nullptr for an op the table does not list.
const OnnxArity *OnnxInputArity(const std::string &op_type);

}  // namespace converter
}  // namespace mace

#endif  // MACE_CONVERTER_ONNX_ONNX_ARITY_H_
