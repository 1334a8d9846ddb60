#include "mace/ops/common/broadcast_util.h"

#include <algorithm>

namespace mace {
namespace {

// `shape` with leading 1s up to `rank` dims.
Shape PadLeft(const Shape &shape, size_t rank) {
  Shape padded(rank - shape.size(), 1);
  padded.insert(padded.end(), shape.begin(), shape.end());
  return padded;
}

// Contiguous strides of an operand along merged dims; 0 where it is
// broadcast (its extent along the dim is 1).
std::vector<int64_t> OperandStrides(const std::vector<int64_t> &dims,
                                    const std::vector<bool> &broadcast) {
  std::vector<int64_t> strides(dims.size(), 0);
  int64_t stride = 1;
  for (size_t k = dims.size(); k-- > 0;) {
    if (broadcast[k]) continue;
    strides[k] = stride;
    stride *= dims[k];
  }
  return strides;
}

}  // namespace

bool BroadcastShape(const Shape &a, const Shape &b, Shape *out) {
  const size_t rank = std::max(a.size(), b.size());
  const Shape pa = PadLeft(a, rank);
  const Shape pb = PadLeft(b, rank);
  Shape result(rank);
  for (size_t i = 0; i < rank; ++i) {
    if (pa[i] == pb[i] || pb[i] == 1) {
      result[i] = pa[i];
    } else if (pa[i] == 1) {
      result[i] = pb[i];
    } else {
      return false;
    }
  }
  *out = result;
  return true;
}

BroadcastPlan MakeBroadcastPlan(const Shape &a, const Shape &b) {
  const size_t rank = std::max(a.size(), b.size());
  const Shape pa = PadLeft(a, rank);
  const Shape pb = PadLeft(b, rank);
  std::vector<int64_t> dims;
  std::vector<bool> a_bcast, b_bcast;
  for (size_t i = 0; i < rank; ++i) {
    const int64_t d = pa[i] == 1 ? pb[i] : pa[i];
    if (d == 1) continue;  // contributes nothing to any offset
    const bool ab = pa[i] != d;
    const bool bb = pb[i] != d;
    if (!dims.empty() && a_bcast.back() == ab && b_bcast.back() == bb) {
      dims.back() *= d;
    } else {
      dims.push_back(d);
      a_bcast.push_back(ab);
      b_bcast.push_back(bb);
    }
  }
  if (dims.empty()) {
    dims.push_back(1);
    a_bcast.push_back(false);
    b_bcast.push_back(false);
  }
  BroadcastPlan plan;
  plan.a_strides = OperandStrides(dims, a_bcast);
  plan.b_strides = OperandStrides(dims, b_bcast);
  plan.dims = std::move(dims);
  return plan;
}

int64_t BroadcastPlan::rows() const {
  int64_t count = 1;
  for (size_t k = 0; k + 1 < dims.size(); ++k) count *= dims[k];
  return count;
}

BroadcastRowCursor::BroadcastRowCursor(const BroadcastPlan &plan, int64_t row)
    : plan_(plan), coords_(plan.dims.size(), 0) {
  for (size_t k = plan.dims.size() - 1; k-- > 0;) {
    coords_[k] = row % plan.dims[k];
    row /= plan.dims[k];
    a_offset_ += coords_[k] * plan.a_strides[k];
    b_offset_ += coords_[k] * plan.b_strides[k];
  }
}

void BroadcastRowCursor::Next() {
  for (size_t k = plan_.dims.size() - 1; k-- > 0;) {
    a_offset_ += plan_.a_strides[k];
    b_offset_ += plan_.b_strides[k];
    if (++coords_[k] < plan_.dims[k]) return;
    a_offset_ -= plan_.dims[k] * plan_.a_strides[k];
    b_offset_ -= plan_.dims[k] * plan_.b_strides[k];
    coords_[k] = 0;
  }
}

}  // namespace mace
