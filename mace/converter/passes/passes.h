// Graph passes over the converter IR. Each is small, named, idempotent and
// keeps the graph's values: it returns an error only for internal
// inconsistencies. The default pipeline is a list in pass_pipeline.cc.

#ifndef MACE_CONVERTER_PASSES_PASSES_H_
#define MACE_CONVERTER_PASSES_PASSES_H_

#include <string>
#include <vector>

#include "mace/converter/ir/graph_builder.h"
#include "mace/public/mace.h"

namespace mace {
namespace converter {

using GraphPass = MaceStatus (*)(GraphBuilder *graph);

struct NamedPass {
  const char *name;
  GraphPass run;
};

// Transpose(p2) of Transpose(p1): one transpose, or none when p1∘p2 is
// the identity.
MaceStatus CancelTransposes(GraphBuilder *graph);
// Moves transposes below elementwise ops and concats (so that they meet
// their inverse and cancel).
MaceStatus SinkTransposes(GraphBuilder *graph);
// A transpose that only moves dims of size 1 is a reshape (free: an alias).
MaceStatus TransposeToReshape(GraphBuilder *graph);
// Reshape of a reshape is one reshape; a reshape to the same shape and
// Identity ops disappear.
MaceStatus SimplifyReshapes(GraphBuilder *graph);

// Drops ops whose outputs reach no graph output (so they stop counting as
// consumers in the fusion passes below).
MaceStatus RemoveDeadOps(GraphBuilder *graph);
// Reshape → Transpose → Reshape that interleaves channel groups (channel
// last, or channel first around an NCHW flatten) → ChannelShuffle.
MaceStatus FuseChannelShuffle(GraphBuilder *graph);
// Reshape → Transpose → Reshape that moves r x r blocks of channels into
// space (a pixel shuffle written by hand; channel first or last, DCR or CRD
// order) → DepthToSpace.
MaceStatus FuseDepthToSpace(GraphBuilder *graph);

// x * sigmoid(x) and x * hardsigmoid(x) (alpha 1/6, beta 1/2): one
// Activation SWISH / HARDSWISH.
MaceStatus FuseSwish(GraphBuilder *graph);
// 0.5 * x * (1 + erf(x / sqrt(2))) written as five Eltwise ops: one
// Activation GELU.
MaceStatus FuseGelu(GraphBuilder *graph);

// A zero Pad of H and W feeding only an average pooling, a Conv2D or a
// DepthwiseConv2d (VALID or explicit padding) → that op's padding.
MaceStatus FusePad(GraphBuilder *graph);

// MatMul of a rank-2 activation by a constant rank-2 matrix (no
// transpose_a) → FullyConnected with weight [N, K].
MaceStatus MatMulToFullyConnected(GraphBuilder *graph);
// FullyConnected reading (Reshape to [N, K] of) Transpose(0,3,1,2) of an
// NHWC tensor reads the tensor itself, its weight columns reordered.
MaceStatus FoldTransposeIntoFullyConnected(GraphBuilder *graph);
// A per-channel constant added (Eltwise SUM, BiasAdd) to or multiplied
// (Eltwise PROD) with a conv / fully connected output goes into its bias and
// filter.
MaceStatus FoldBiasIntoConv(GraphBuilder *graph);
// BatchNorm after a conv / fully connected layer goes into its filter and
// bias (and its activation onto the layer).
MaceStatus FoldBatchNormIntoConv(GraphBuilder *graph);
// Eltwise SUM of a Conv2D's output (no activation) and a tensor of its
// shape → the Conv2D with `fused_add` and that tensor as its last input.
MaceStatus FuseResidualAdd(GraphBuilder *graph);
// An Activation op after an op with a fused activation slot becomes that
// op's activation; PRELU (with a constant slope, appended as the op's last
// input) into Conv2D, DepthwiseConv2d, Deconv2D, DepthwiseDeconv2d,
// FullyConnected and BatchNorm.
MaceStatus FuseActivation(GraphBuilder *graph);
// Eltwise PROD of x [N, H, W, C] and a per-channel scale [N or 1, 1, 1, C]
// that only a 1x1 ungrouped Conv2D reads → that Conv2D on x with
// `input_scale` (a small filter's rows are scaled at each Run instead).
MaceStatus FuseInputScale(GraphBuilder *graph);
// A 1x1 Conv2D whose large output only a DepthwiseConv2d reads → one
// PointwiseDepthwiseConv2d computing that output in strips, in cache.
MaceStatus FusePointwiseDepthwise(GraphBuilder *graph);

// The passes `mace convert` runs, in order.
const std::vector<NamedPass> &DefaultPasses();
// Runs the default passes until none changes the graph (at most a few
// rounds), stopping at the first error.
MaceStatus RunDefaultPasses(GraphBuilder *graph);

}  // namespace converter
}  // namespace mace

#endif  // MACE_CONVERTER_PASSES_PASSES_H_
