// A Pad of zeros along H and W feeding only an average pooling or a
// convolution becomes that op's padding: the op reads the unpadded tensor
// and the Pad's pass over it (and its buffer) goes. PyTorch exports
// avg_pool2d(padding=1) as Pad + AveragePool (Inception-v3's nine pool
// branches: 0.57 ms of 123 at 1 thread), and TensorFlow models often pad
// explicitly before a VALID convolution.
//   - AVG Pooling: the padded cells count in the divisor, as the Pad's
//     zeros did (count_include_pad 1); not with CEIL rounding (its extra
//     cells past the padded input never count) or padding of its own that
//     excludes the padding from the divisor. MAX pooling would not see
//     the zeros and keeps its Pad.
//   - Conv2D and DepthwiseConv2d: zeros are what their padding reads.
// Their own padding must be VALID or explicit (SAME depends on the padded
// size); the pads add up.

#include <vector>

#include "mace/converter/passes/fusion_utils.h"
#include "mace/converter/passes/graph_utils.h"
#include "mace/converter/passes/passes.h"
#include "mace/core/status.h"
#include "mace/model/op_provenance.h"

namespace mace {
namespace converter {
namespace {

constexpr int64_t kConstantPad = 0;
constexpr int64_t kAvgPooling = 1;
constexpr int64_t kValidPadding = 0;

// [top, left, bottom, right] of a zero-valued constant Pad of an NHWC
// tensor that pads H and W only, or empty.
std::vector<int64_t> SpatialZeroPads(const OperatorDef &pad) {
  if (pad.type() != "Pad" || pad.input_size() != 1 || pad.output_size() != 1 ||
      IntArg(pad, "pad_type", kConstantPad) != kConstantPad) {
    return {};
  }
  const Argument *value = FindArg(pad, "constant_value");
  if (value != nullptr && value->has_f() && value->f() != 0.0f) return {};
  const std::vector<int64_t> p = IntsArg(pad, "paddings");
  if (p.size() != 8 || p[0] != 0 || p[1] != 0 || p[6] != 0 || p[7] != 0) {
    return {};
  }
  for (int64_t v : p) {
    if (v < 0) return {};
  }
  return {p[2], p[4], p[3], p[5]};
}

// The op's own padding as [top, left, bottom, right], when it is VALID or
// explicit; false for SAME and FULL, which depend on the input's size.
bool OwnPads(const OperatorDef &op, std::vector<int64_t> *pads) {
  const std::vector<int64_t> values = IntsArg(op, "padding_values");
  if (values.size() == 4) {
    *pads = values;
    return true;
  }
  if (values.size() == 2) {
    // [total_h, total_w], the smaller half first.
    *pads = {values[0] / 2, values[1] / 2, values[0] - values[0] / 2,
             values[1] - values[1] / 2};
    return true;
  }
  if (!values.empty() ||
      IntArg(op, "padding", kValidPadding) != kValidPadding) {
    return false;
  }
  *pads = {0, 0, 0, 0};
  return true;
}

// Whether `op` reads zero padding the way a zero Pad before it feeds it.
bool TakesZeroPads(const OperatorDef &op, const std::vector<int64_t> &own) {
  if (op.type() == "Conv2D" || op.type() == "DepthwiseConv2d") return true;
  if (op.type() != "Pooling" ||
      IntArg(op, "pooling_type", kAvgPooling) != kAvgPooling ||
      IntArg(op, "global_pooling", 0) != 0 ||
      IntArg(op, "round_mode", 0) != 0) {
    return false;
  }
  const bool has_own = own != std::vector<int64_t>{0, 0, 0, 0};
  return !has_own || IntArg(op, "count_include_pad", 0) == 1;
}

MaceStatus TryFuse(GraphBuilder *graph, size_t index,
                   const ConsumerMap &consumers, bool *fused) {
  *fused = false;
  std::vector<OperatorDef> &ops = *graph->mutable_ops();
  const OperatorDef &op = ops[index];
  if (op.input_size() < 1) return MaceStatus::MACE_SUCCESS;
  const int producer = ProducerOf(ops, op.input(0));
  if (producer < 0) return MaceStatus::MACE_SUCCESS;
  const std::vector<int64_t> added = SpatialZeroPads(ops[producer]);
  std::vector<int64_t> own;
  if (added.empty() || !OwnPads(op, &own) || !TakesZeroPads(op, own) ||
      SoleConsumer(*graph, consumers, ops[producer].output(0)) !=
          static_cast<int>(index)) {
    return MaceStatus::MACE_SUCCESS;
  }
  OperatorDef &target = ops[index];
  std::vector<int64_t> pads(4);
  for (int i = 0; i < 4; ++i) pads[i] = own[i] + added[i];
  SetIntsArg(&target, "padding_values", pads);
  SetIntArg(&target, "padding", kValidPadding);
  if (target.type() == "Pooling") SetIntArg(&target, "count_include_pad", 1);
  target.set_input(0, ops[producer].input(0));
  RecordFusion(ops[producer], &target);
  ops.erase(ops.begin() + producer);
  *fused = true;
  return graph->Reinfer(static_cast<size_t>(producer) < index ? index - 1
                                                              : index);
}

}  // namespace

MaceStatus FusePad(GraphBuilder *graph) {
  return FuseAtEveryOp(graph, TryFuse);
}

}  // namespace converter
}  // namespace mace
