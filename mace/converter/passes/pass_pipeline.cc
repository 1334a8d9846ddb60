#include "mace/converter/passes/passes.h"
#include "mace/core/status.h"

#include "mace/core/logging.h"

namespace mace {
namespace converter {

const std::vector<NamedPass> &DefaultPasses() {
  static const std::vector<NamedPass> kPasses = {
      // Before the transpose passes: the fused op has one input, which a
      // transpose moves through.
      {"fuse_swish", FuseSwish},
      {"fuse_gelu", FuseGelu},
      {"sink_transposes", SinkTransposes},
      {"cancel_transposes", CancelTransposes},
      {"transpose_to_reshape", TransposeToReshape},
      // Before simplify_reshapes merges the shuffle's (or the pixel
      // shuffle's) last reshape into a following flatten.
      {"fuse_channel_shuffle", FuseChannelShuffle},
      {"fuse_depth_to_space", FuseDepthToSpace},
      {"simplify_reshapes", SimplifyReshapes},
      // Fusions, on the graph the transpose passes left channel last.
      {"remove_dead_ops", RemoveDeadOps},
      {"fuse_pad", FusePad},
      {"matmul_to_fully_connected", MatMulToFullyConnected},
      {"fold_transpose_into_fully_connected", FoldTransposeIntoFullyConnected},
      {"fold_bias_into_conv", FoldBiasIntoConv},
      {"fold_batch_norm_into_conv", FoldBatchNormIntoConv},
      // After the folds into the filter and bias (which a fused addend
      // stops), before fuse_activation moves the ReLU after the sum in.
      {"fuse_residual_add", FuseResidualAdd},
      {"fuse_activation", FuseActivation},
      // After fuse_activation: a PRELU's slope goes before the scale.
      {"fuse_input_scale", FuseInputScale},
      // Last: both ops carry their activations by now.
      {"fuse_pointwise_depthwise", FusePointwiseDepthwise},
  };
  return kPasses;
}

MaceStatus RunDefaultPasses(GraphBuilder *graph) {
  // Passes enable each other (a sunk transpose cancels, a cancelled pair
  // exposes a reshape chain); a few rounds reach the fixed point.
  constexpr int kMaxRounds = 8;
  for (int round = 0; round < kMaxRounds; ++round) {
    const size_t ops_before = graph->ops().size();
    for (const NamedPass &pass : DefaultPasses()) {
      const MaceStatus status = pass.run(graph);
      if (status != MaceStatus::MACE_SUCCESS) {
        return MaceStatus(status.code(), std::string("pass ") + pass.name +
                                             ": " + status.information());
      }
      VLOG(2) << "pass " << pass.name << ": " << graph->ops().size()
              << " ops";
    }
    if (graph->ops().size() == ops_before && round > 0) break;
  }
  return MaceStatus::MACE_SUCCESS;
}

}  // namespace converter
}  // namespace mace
