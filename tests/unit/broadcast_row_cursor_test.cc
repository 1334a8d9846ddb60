// BroadcastRowCursor against offsets computed per output element from the
// numpy rule, written independently of the plan: every row of the
// broadcast output, walked from every starting row.

#include <gtest/gtest.h>

#include <cstdint>
#include <vector>

#include "mace/ops/common/broadcast_util.h"

namespace mace {
namespace {

// Offset into an operand of `shape` (aligned at the last dims of `out`) of
// the output element with coordinates `coords`.
int64_t OperandOffset(const Shape &shape, const Shape &out,
                      const std::vector<int64_t> &coords) {
  const size_t lead = out.size() - shape.size();
  int64_t offset = 0;
  for (size_t i = 0; i < shape.size(); ++i) {
    const int64_t coord = shape[i] == 1 ? 0 : coords[lead + i];
    offset = offset * shape[i] + coord;
  }
  return offset;
}

std::vector<int64_t> Coords(int64_t element, const Shape &out) {
  std::vector<int64_t> coords(out.size());
  for (size_t i = out.size(); i-- > 0;) {
    coords[i] = element % out[i];
    element /= out[i];
  }
  return coords;
}

void ExpectCursorMatches(const Shape &a, const Shape &b) {
  Shape out;
  ASSERT_TRUE(BroadcastShape(a, b, &out));
  const BroadcastPlan plan = MakeBroadcastPlan(a, b);
  const int64_t inner = plan.inner();
  for (int64_t first = 0; first < plan.rows(); ++first) {
    BroadcastRowCursor cursor(plan, first);
    for (int64_t row = first; row < plan.rows(); ++row, cursor.Next()) {
      // The row's first element, and the operands' steps along the row.
      const std::vector<int64_t> coords = Coords(row * inner, out);
      ASSERT_EQ(cursor.a_offset(), OperandOffset(a, out, coords))
          << "row " << row << " from " << first;
      ASSERT_EQ(cursor.b_offset(), OperandOffset(b, out, coords))
          << "row " << row << " from " << first;
    }
  }
}

TEST(BroadcastRowCursorTest, MatchesTheNumpyRuleFromEveryRow) {
  const std::vector<std::pair<Shape, Shape>> cases = {
      {{2, 3, 4}, {2, 3, 4}},        // one row
      {{2, 3, 4}, {4}},              // per last dim
      {{2, 3, 4}, {3, 1}},           // per middle dim
      {{4, 1}, {2, 3, 1, 5}},        // both broadcast
      {{2, 1, 7, 1}, {5, 1, 3}},     // alternating
      {{3, 1, 17}, {3, 7, 1}},       //
      {{2, 5, 5, 3}, {2, 5, 5, 1}},  // an [N, H, W, 1] map
      {{1, 1, 1}, {2, 5, 7}},        //
      {{6}, {}},                     // scalar
  };
  for (const auto &c : cases) {
    ExpectCursorMatches(c.first, c.second);
    ExpectCursorMatches(c.second, c.first);
  }
}

}  // namespace
}  // namespace mace
