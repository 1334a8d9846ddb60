// Helpers shared by the passes that fold a following op into the op that
// produces its input: into a convolution's or fully connected layer's
// weights (fold_batch_norm_into_conv.cc, fold_bias_into_conv.cc) or into an
// op's fused activation (fuse_activation.cc).

#ifndef MACE_CONVERTER_PASSES_FUSION_UTILS_H_
#define MACE_CONVERTER_PASSES_FUSION_UTILS_H_

#include <map>
#include <string>
#include <vector>

#include "mace/converter/ir/graph_builder.h"
#include "mace/model/mace.pb.h"
#include "mace/ops/eltwise_type.h"
#include "mace/public/mace.h"

namespace mace {
namespace converter {

using ConsumerMap = std::map<std::string, std::vector<size_t>>;

// The index of the only op reading `tensor`, or -1 when no op or several
// read it, or it is a graph output (its value must stay visible).
int SoleConsumer(const GraphBuilder &graph, const ConsumerMap &consumers,
                 const std::string &tensor);

// One fusion attempt at ops[index]: sets *fused when it rewrote the graph.
using TryFusionFn = MaceStatus (*)(GraphBuilder *graph, size_t index,
                                   const ConsumerMap &consumers, bool *fused);

// Runs `try_fusion` at every op index in order. After a fusion the
// consumer map is rebuilt and the same index is tried again: the fused op
// may take its next consumer too (a chain of sums and products), or the op
// after it has moved down to that index.
MaceStatus FuseAtEveryOp(GraphBuilder *graph, TryFusionFn try_fusion);

// ops[producer] takes over ops[consumer]'s output and ops[consumer] is
// removed; returns the producer's index afterwards.
size_t AbsorbConsumer(std::vector<OperatorDef> *ops, size_t producer,
                      size_t consumer);

// Whether `op` applies an activation of its own (argument `activation`
// present and neither NOOP nor empty).
bool HasFusedActivation(const OperatorDef &op);
// Whether `op`'s activation (an Activation op's, or a fused one) is PRELU,
// which reads a slope input.
bool IsPRelu(const OperatorDef &op);
// Replaces `to`'s activation arguments by `from`'s.
void CopyActivationArgs(const OperatorDef &from, OperatorDef *to);
// Adds `from`'s activation arguments to `to` under `prefix` + their names
// (PointwiseDepthwiseConv2d's `pointwise_activation`, ...).
void CopyActivationArgsAs(const OperatorDef &from, const std::string &prefix,
                          OperatorDef *to);

// An Eltwise op of `type` with `inputs` inputs and one output, without
// SUM weights (`coeff` absent or empty) or a fused activation.
bool IsPlainEltwise(const OperatorDef &op, EltwiseType type, int inputs);
// A plain Eltwise `type` of two tensors: no scalar operand either.
bool IsPlainBinaryEltwise(const OperatorDef &op, EltwiseType type);

// Turns `op` into an Activation `activation` of `input`, keeping its name
// and output, and records `absorbed` as fused into it (the fusion passes
// that replace a chain of ops by one activation). The caller reinfers it.
void ReplaceWithActivation(const std::string &input,
                           const std::string &activation,
                           const OperatorDef &absorbed, OperatorDef *op);

// Conv2D's argument saying that its last input is added to its output
// before the activation (fuse_residual_add.cc).
constexpr char kFusedAddArg[] = "fused_add";
bool HasFusedAdd(const OperatorDef &op);
// Conv2D's argument saying that an input after its bias (and PRELU slope)
// scales its input's channels (fuse_input_scale.cc).
constexpr char kInputScaleArg[] = "input_scale";
bool HasInputScale(const OperatorDef &op);

// A new constant of `channels` zeros named after `op`, returned by name:
// the bias a fusion gives an op without one, so that the inputs it appends
// (a slope, a scale, an addend) find their places.
std::string AddZeroBias(GraphBuilder *graph, const OperatorDef &op,
                        int64_t channels);

// Where a weighted op's bias input is, or would be appended: the
// deconvolutions may carry TensorFlow's int32 output_shape as input 2,
// before the bias.
int BiasIndex(const GraphBuilder &graph, const OperatorDef &op);

// Conv2D, DepthwiseConv2d, Deconv2D, DepthwiseDeconv2d and, when
// `with_fully_connected`, FullyConnected: ops computing
// act(sum(x * filter) + bias) with one output channel per bias value (not
// a Conv2D with a fused addend, whose output scale is no longer its
// filter's).
bool IsWeightedOp(const OperatorDef &op, bool with_fully_connected);
// Whether a weighted op's filter is a float constant and its bias a float
// constant or absent, so that both can be rewritten.
bool HasConstantWeights(const GraphBuilder &graph, const OperatorDef &op);

// Folds y' = y * scale[c] + shift[c] (c the output channel, the last axis
// of y) into ops[index]'s weights: filter' = filter * scale per output
// channel, bias' = bias * scale + shift. An empty `scale` means 1 and an
// empty `shift` 0. New values get new constant names, so weights shared
// with other ops keep theirs.
MaceStatus FoldChannelAffine(GraphBuilder *graph, size_t index,
                             const std::vector<float> &scale,
                             const std::vector<float> &shift);

}  // namespace converter
}  // namespace mace

#endif  // MACE_CONVERTER_PASSES_FUSION_UTILS_H_
