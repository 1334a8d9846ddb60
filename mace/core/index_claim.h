// A range of indices [front, back) in one atomic word (front << 32 |
// back) that threads claim one index at a time, without a lock: one from
// the front, the others from the back, so that they meet only at the end.
// The thread pool's shares of a loop and the load's deferred packing
// pieces are claimed this way.

#ifndef MACE_CORE_INDEX_CLAIM_H_
#define MACE_CORE_INDEX_CLAIM_H_

#include <atomic>
#include <cstdint>

namespace mace {

// The word holding [front, back); both below 2^32.
constexpr uint64_t ClaimableRange(uint64_t front, uint64_t back) {
  return front << 32 | back;
}

// Claims the first (`from_front`) or the last index left in `range`;
// false when none is left.
inline bool ClaimIndex(std::atomic<uint64_t> &range, bool from_front,
                       int64_t *index) {
  uint64_t now = range.load(std::memory_order_relaxed);
  for (;;) {
    const uint64_t front = now >> 32;
    const uint64_t back = now & 0xffffffffu;
    if (front >= back) return false;
    const uint64_t claimed = from_front ? now + (uint64_t{1} << 32) : now - 1;
    if (range.compare_exchange_weak(now, claimed, std::memory_order_relaxed)) {
      *index = static_cast<int64_t>(from_front ? front : back - 1);
      return true;
    }
  }
}

}  // namespace mace

#endif  // MACE_CORE_INDEX_CLAIM_H_
