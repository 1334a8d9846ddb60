// Depth to space (a pixel shuffle) as frameworks spell it by hand, three
// data moves (data_move_pattern.h), blocks of r x r, C output channels:
//   channel first, CRD (torch's PixelShuffle before opset 11, einops):
//     x [N, C·r·r, H, W] → [N, C, r, r, H, W] → perm (0 1 4 2 5 3)
//     → [N, C, H·r, W·r]
//   channel first, DCR: → [N, r, r, C, H, W] → perm (0 3 4 1 5 2) → same
//   channel last, DCR (TensorFlow's order): x [N, H, W, r·r·C]
//     → [N, H, W, r, r, C] → perm (0 1 3 2 4 5) → [N, H·r, W·r, C]
//   channel last, CRD: → [N, H, W, C, r, r] → perm (0 1 4 2 5 3) → same
// Each is DepthToSpace (block r, mode DCR or CRD); the channel-first forms
// become Transpose to channel last → DepthToSpace → Transpose back, which
// the transpose passes cancel against their neighbours.

#include "mace/converter/passes/data_move_pattern.h"
#include "mace/converter/passes/passes.h"
#include "mace/core/status.h"

namespace mace {
namespace converter {
namespace {

// One of the four forms above: the permutation, and where the split
// shape holds r (twice, neighbours) and C.
struct DepthToSpaceForm {
  const char *mode;
  bool channel_first;
  std::vector<int64_t> perm;
  int r_dim;
  int c_dim;
};

const DepthToSpaceForm kForms[] = {
    {"CRD", true, {0, 1, 4, 2, 5, 3}, 2, 1},   // [N, C, r, r, H, W]
    {"DCR", true, {0, 3, 4, 1, 5, 2}, 1, 3},   // [N, r, r, C, H, W]
    {"DCR", false, {0, 1, 3, 2, 4, 5}, 3, 5},  // [N, H, W, r, r, C]
    {"CRD", false, {0, 1, 4, 2, 5, 3}, 4, 3},  // [N, H, W, C, r, r]
};

// Whether `move` is one of the four forms, and then DepthToSpace.
bool AsDepthToSpace(const DataMove &move, MoveAsOp *op) {
  const Shape &x = move.input;
  const Shape &s = move.split_shape;
  if (x.size() != 4 || s.size() != 6 || move.output.size() != 4 ||
      s[0] != x[0]) {
    return false;
  }
  for (const DepthToSpaceForm &form : kForms) {
    const int64_t r = s[form.r_dim];
    const int64_t c = s[form.c_dim];
    // H and W: dims 4, 5 of the split and 2, 3 of x channel first; 1, 2 of
    // both channel last.
    const int split_h = form.channel_first ? 4 : 1;
    const int x_h = form.channel_first ? 2 : 1;
    const int64_t x_c = form.channel_first ? x[1] : x[3];
    const Shape y = form.channel_first ? Shape{x[0], c, x[2] * r, x[3] * r}
                                       : Shape{x[0], x[1] * r, x[2] * r, c};
    if (move.perm == form.perm && s[form.r_dim + 1] == r &&
        s[split_h] == x[x_h] && s[split_h + 1] == x[x_h + 1] &&
        c * r * r == x_c && move.output == y) {
      op->type = "DepthToSpace";
      op->args = {OpArg::Int("block_size", r),
                  OpArg::String("mode", form.mode)};
      op->channel_first = form.channel_first;
      return true;
    }
  }
  return false;
}

}  // namespace

MaceStatus FuseDepthToSpace(GraphBuilder *graph) {
  return FuseDataMoves(graph, AsDepthToSpace);
}

}  // namespace converter
}  // namespace mace
