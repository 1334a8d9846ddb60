// Where ops put the arrays they compute from their weights at load (SGEMM
// panels, Winograd-transformed filters): an engine gives each op a source,
// from a cache file (packed_weight_cache.h) or from memory of its own
// (packed_weight_arena.h).

#ifndef MACE_CORE_PACKED_WEIGHT_SOURCE_H_
#define MACE_CORE_PACKED_WEIGHT_SOURCE_H_

#include <cstdint>
#include <memory>

#include "mace/core/aligned_buffer.h"
#include "mace/core/thread_pool.h"

namespace mace {

// Where an op puts the arrays it packs at load.
class PackedWeightSource {
 public:
  virtual ~PackedWeightSource() = default;

  // Memory for the caller's next packed array of `bytes`, aligned to 64
  // bytes, valid as long as the source's owner. With *ready the memory
  // already holds the array (from the cache file) and is read-only; without
  // it the caller fills it. Null when out of memory.
  virtual void *Acquire(int64_t bytes, bool *ready) = 0;
};

// What hands each op of a graph its source.
class PackedWeightStore {
 public:
  virtual ~PackedWeightStore() = default;

  // The source of the op at `op_index` in the graph.
  virtual std::unique_ptr<PackedWeightSource> SourceFor(int op_index) = 0;

  // Maps the fresh memory of the arrays handed out since the last call,
  // before they are written, on `pool`'s threads (the caller's alone
  // without a pool).
  virtual void MapHandedOut(ThreadPool * /*pool*/) {}
};

// `count` floats for an op's packed array: from `source` (*ready as
// Acquire says; `owned` released), or, without a source (an op run
// outside an engine), allocated in `owned` (*ready false). Null when out
// of memory.
inline float *AcquirePackedFloats(PackedWeightSource *source, int64_t count,
                                  AlignedArray<float> *owned, bool *ready) {
  *ready = false;
  if (source == nullptr) {
    return owned->Allocate(static_cast<size_t>(count)) ? owned->data()
                                                        : nullptr;
  }
  owned->Release();
  return static_cast<float *>(source->Acquire(
      count * static_cast<int64_t>(sizeof(float)), ready));
}

}  // namespace mace

#endif  // MACE_CORE_PACKED_WEIGHT_SOURCE_H_
