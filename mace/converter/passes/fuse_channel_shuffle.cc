// ShuffleNet's channel shuffle as frameworks spell it, three data moves:
//   channel last:  x [..., C] → Reshape [..., g, C/g] → Transpose (swap the
//                  last two) → Reshape [..., C]
//   channel first: x [N, C, ...] → Reshape [N, g, C/g, ...] → Transpose
//                  (swap dims 1 and 2) → Reshape [N, C, ...]
// Either moves channel a·(C/g) + b to b·g + a, which is ChannelShuffle
// (group g) on the channel axis. The channel-first form becomes
// Transpose to channel last → ChannelShuffle → Transpose back, and the
// transpose passes then cancel those transposes against their neighbours.

#include <algorithm>

#include "mace/converter/passes/data_move_pattern.h"
#include "mace/converter/passes/passes.h"
#include "mace/core/status.h"

namespace mace {
namespace converter {
namespace {

// x [..., C] split into [..., g, C/g] with those two dims swapped.
bool MatchChannelLast(const Shape &x, const Shape &split,
                      const std::vector<int64_t> &perm, int64_t *group) {
  const size_t r = x.size();
  if (r < 1 || split.size() != r + 1) return false;
  for (size_t d = 0; d + 1 < r; ++d) {
    if (split[d] != x[d]) return false;
  }
  std::vector<int64_t> expected = IdentityPerm(r + 1);
  std::swap(expected[r - 1], expected[r]);
  *group = split[r - 1];
  return split[r - 1] * split[r] == x[r - 1] && perm == expected;
}

// x [N, C, ...] split into [N, g, C/g, ...] with dims 1 and 2 swapped.
bool MatchChannelFirst(const Shape &x, const Shape &split,
                       const std::vector<int64_t> &perm, int64_t *group) {
  const size_t r = x.size();
  if (r < 3 || split.size() != r + 1 || split[0] != x[0]) return false;
  for (size_t d = 2; d < r; ++d) {
    if (split[d + 1] != x[d]) return false;
  }
  std::vector<int64_t> expected = IdentityPerm(r + 1);
  std::swap(expected[1], expected[2]);
  *group = split[1];
  return split[1] * split[2] == x[1] && perm == expected;
}

bool AsChannelShuffle(const DataMove &move, MoveAsOp *op) {
  if (move.output != move.input) return false;
  int64_t group = 0;
  if (MatchChannelLast(move.input, move.split_shape, move.perm, &group)) {
    op->channel_first = false;
  } else if (MatchChannelFirst(move.input, move.split_shape, move.perm,
                               &group)) {
    op->channel_first = true;
  } else {
    return false;
  }
  op->type = "ChannelShuffle";
  op->args = {OpArg::Int("group", group)};
  return true;
}

}  // namespace

MaceStatus FuseChannelShuffle(GraphBuilder *graph) {
  return FuseDataMoves(graph, AsChannelShuffle);
}

}  // namespace converter
}  // namespace mace
