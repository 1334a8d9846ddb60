// A data move as frameworks spell ops they lack: Reshape → Transpose →
// Reshape, each intermediate read only by the next op. The passes that
// recognise one as a single op (fuse_channel_shuffle.cc: ChannelShuffle;
// fuse_depth_to_space.cc: DepthToSpace) share the matching and, for the
// channel-first (NCHW) forms, the rewrite into Transpose to channel last →
// op → Transpose back, which the transpose passes then cancel against their
// neighbours.

#ifndef MACE_CONVERTER_PASSES_DATA_MOVE_PATTERN_H_
#define MACE_CONVERTER_PASSES_DATA_MOVE_PATTERN_H_

#include <map>
#include <string>
#include <vector>

#include "mace/converter/ir/graph_builder.h"
#include "mace/model/mace.pb.h"

namespace mace {
namespace converter {

struct DataMove {
  int split = -1;      // the first Reshape
  int transpose = -1;  // the Transpose
  size_t merge = 0;    // the last Reshape
  Shape input;         // the first Reshape's input
  Shape split_shape;   // the Transpose's input
  Shape output;        // the last Reshape's output
  std::vector<int64_t> perm;
};

// The data move ending at ops[last] (a Reshape), or false.
bool MatchDataMove(const GraphBuilder &graph,
                   const std::map<std::string, std::vector<size_t>> &consumers,
                   size_t last, DataMove *move);

// 0, 1, ..., rank - 1.
std::vector<int64_t> IdentityPerm(size_t rank);

// A one-input, one-output op.
OperatorDef MakeOp(const std::string &type, const std::string &name,
                   const std::string &input, const std::string &output);

// Replaces a channel-first move by Transpose (dim 1 to last) → `type` with
// `args` on the channel-last tensor → Transpose back, in the three ops'
// places (each feeds the next, so the order is a valid schedule).
MaceStatus RewriteChannelFirst(GraphBuilder *graph, const DataMove &move,
                               const std::string &type,
                               const std::vector<OpArg> &args);

// Replaces a channel-last move by `type` with `args` in the last op's
// place and marks the other two in *erase.
MaceStatus RewriteChannelLast(GraphBuilder *graph, const DataMove &move,
                              const std::string &type,
                              const std::vector<OpArg> &args,
                              std::vector<bool> *erase);

}  // namespace converter
}  // namespace mace

#endif  // MACE_CONVERTER_PASSES_DATA_MOVE_PATTERN_H_
