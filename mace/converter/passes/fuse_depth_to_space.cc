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

// DepthToSpace of block r in `mode` ("DCR" or "CRD").
void SetDepthToSpace(int64_t r, const char *mode, bool channel_first,
                     MoveAsOp *op) {
  op->type = "DepthToSpace";
  op->args = {OpArg::Int("block_size", r), OpArg::String("mode", mode)};
  op->channel_first = channel_first;
}

// Whether `move` is one of the four forms above.
bool AsDepthToSpace(const DataMove &move, MoveAsOp *op) {
  const Shape &x = move.input;
  const Shape &s = move.split_shape;
  const Shape &y = move.output;
  if (x.size() != 4 || s.size() != 6 || y.size() != 4 || s[0] != x[0]) {
    return false;
  }
  const std::vector<int64_t> kFirstCrd = {0, 1, 4, 2, 5, 3};
  const std::vector<int64_t> kFirstDcr = {0, 3, 4, 1, 5, 2};
  const std::vector<int64_t> kLastDcr = {0, 1, 3, 2, 4, 5};
  const std::vector<int64_t> kLastCrd = {0, 1, 4, 2, 5, 3};
  // Channel first: [N, C, r, r, H, W] or [N, r, r, C, H, W].
  if (s[4] == x[2] && s[5] == x[3]) {
    const bool crd = move.perm == kFirstCrd && s[2] == s[3];
    const bool dcr = move.perm == kFirstDcr && s[1] == s[2];
    const int64_t r = crd ? s[2] : s[1];
    const int64_t c = crd ? s[1] : s[3];
    if ((crd || dcr) && c * r * r == x[1] &&
        y == Shape{x[0], c, x[2] * r, x[3] * r}) {
      SetDepthToSpace(r, crd ? "CRD" : "DCR", true, op);
      return true;
    }
  }
  // Channel last: [N, H, W, r, r, C] or [N, H, W, C, r, r].
  if (s[1] == x[1] && s[2] == x[2]) {
    const bool dcr = move.perm == kLastDcr && s[3] == s[4];
    const bool crd = move.perm == kLastCrd && s[4] == s[5];
    const int64_t r = dcr ? s[3] : s[4];
    const int64_t c = dcr ? s[5] : s[3];
    if ((crd || dcr) && c * r * r == x[3] &&
        y == Shape{x[0], x[1] * r, x[2] * r, c}) {
      SetDepthToSpace(r, dcr ? "DCR" : "CRD", false, op);
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
