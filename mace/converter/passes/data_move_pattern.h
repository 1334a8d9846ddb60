// A data move as frameworks spell ops they lack: Reshape → Transpose →
// Reshape, each intermediate read only by the next op. The passes that
// recognise one as a single op (fuse_channel_shuffle.cc: ChannelShuffle;
// fuse_depth_to_space.cc: DepthToSpace) share the matching and, for the
// channel-first (NCHW) forms, the rewrite into Transpose to channel last →
// op → Transpose back, which the transpose passes then cancel against their
// neighbours.

#ifndef MACE_CONVERTER_PASSES_DATA_MOVE_PATTERN_H_
#define MACE_CONVERTER_PASSES_DATA_MOVE_PATTERN_H_

#include <string>
#include <vector>

#include "mace/converter/ir/graph_builder.h"
#include "mace/model/mace.pb.h"

namespace mace {
namespace converter {

// One match: the three ops and the shapes and permutation they move by.
struct DataMove {
  int split = -1;      // the first Reshape
  int transpose = -1;  // the Transpose
  size_t merge = 0;    // the last Reshape
  Shape input;         // the first Reshape's input
  Shape split_shape;   // the Transpose's input
  Shape output;        // the last Reshape's output
  std::vector<int64_t> perm;
};

// The op a fusion recognises a data move as, and whether it is the
// channel-first form (replaced by Transpose (dim 1 to last) → op on the
// channel-last tensor → Transpose back) or the channel-last one (replaced
// by the op alone).
struct MoveAsOp {
  std::string type;
  std::vector<OpArg> args;
  bool channel_first = false;
};

// Whether `move` is a form the fusion knows, and as what.
using ClassifyMoveFn = bool (*)(const DataMove &move, MoveAsOp *op);

// Replaces every data move of the graph that `classify` recognises.
MaceStatus FuseDataMoves(GraphBuilder *graph, ClassifyMoveFn classify);

// 0, 1, ..., rank - 1.
std::vector<int64_t> IdentityPerm(size_t rank);

}  // namespace converter
}  // namespace mace

#endif  // MACE_CONVERTER_PASSES_DATA_MOVE_PATTERN_H_
