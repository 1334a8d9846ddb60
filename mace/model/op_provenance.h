// Where a converted op came from: the names of the source-model nodes a
// converter pass fused into it (a Relu into a Conv2D, a BatchNorm into its
// weights), so profiles and errors can name what the user wrote. Kept in an
// op argument MACE's readers ignore: `fused_source_nodes`, the names joined
// by '\n'.

#ifndef MACE_MODEL_OP_PROVENANCE_H_
#define MACE_MODEL_OP_PROVENANCE_H_

#include <string>
#include <vector>

#include "mace/model/mace.pb.h"

namespace mace {

constexpr char kFusedSourceNodesArg[] = "fused_source_nodes";

// The source nodes fused into `op`, in fusion order (empty when none).
std::vector<std::string> FusedSourceNodes(const OperatorDef &op);

// Records that `absorbed` (and whatever it had absorbed) now lives in `op`.
void RecordFusion(const OperatorDef &absorbed, OperatorDef *op);

// "conv1" or "conv1 (+ bn1, relu1)".
std::string DescribeSourceNodes(const OperatorDef &op);

}  // namespace mace

#endif  // MACE_MODEL_OP_PROVENANCE_H_
