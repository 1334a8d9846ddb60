// Numpy-style broadcasting of two operands, and a loop plan that lets a
// binary elementwise kernel walk the broadcast output row by row with plain
// strided inner loops (no per-element index arithmetic).
//
// Rules (numpy): shapes are aligned at their last dims; each pair of dims
// must be equal or one of them 1 (a missing dim counts as 1); the output
// takes the larger. A dim of 0 broadcasts with 1 to 0.

#ifndef MACE_OPS_COMMON_BROADCAST_UTIL_H_
#define MACE_OPS_COMMON_BROADCAST_UTIL_H_

#include <cstdint>
#include <vector>

#include "mace/core/tensor.h"

namespace mace {

// The broadcast shape of a and b; false when they do not broadcast.
bool BroadcastShape(const Shape &a, const Shape &b, Shape *out);

// The output of broadcasting a with b as a loop nest: `dims` outer to inner,
// adjacent output dims merged where both operands step through them alike,
// dims of size 1 dropped. `a_strides[k]` / `b_strides[k]` are element
// strides of each operand along dims[k], 0 where it is broadcast. There is
// always at least one dim (a scalar output is dims = {1}).
struct BroadcastPlan {
  std::vector<int64_t> dims;
  std::vector<int64_t> a_strides;
  std::vector<int64_t> b_strides;

  // Length of the innermost loop and number of rows (all other dims).
  int64_t inner() const { return dims.back(); }
  int64_t rows() const;
};

// Walks the output rows of a plan in order from `row` (output row r starts
// at element r * inner()): the offsets into a and b of the current row's
// first element. Next() steps the outer coordinates instead of dividing
// the row index by each dim, which cost more than the row itself when rows
// are a few values long (an [H, W, 1] map scaling [H, W, 3]).
class BroadcastRowCursor {
 public:
  BroadcastRowCursor(const BroadcastPlan &plan, int64_t row);

  int64_t a_offset() const { return a_offset_; }
  int64_t b_offset() const { return b_offset_; }
  void Next();

 private:
  const BroadcastPlan &plan_;
  std::vector<int64_t> coords_;  // along plan.dims, the inner one unused
  int64_t a_offset_ = 0;
  int64_t b_offset_ = 0;
};

// Requires BroadcastShape(a, b, ...) to have succeeded.
BroadcastPlan MakeBroadcastPlan(const Shape &a, const Shape &b);

}  // namespace mace

#endif  // MACE_OPS_COMMON_BROADCAST_UTIL_H_
