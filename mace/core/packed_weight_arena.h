// Memory of an engine's own for the arrays its ops pack at load.
//
// Arrays are cut one after the other from chunks of at least the model's
// weight size (capped), so that a model's many packed matrices share a few
// large mappings, which get transparent huge pages from 2 MiB where they
// are cheap (aligned_buffer.h), instead of each array faulting in its own
// 4 KiB pages (perf of MobileNet-v2's load: the packing was over half of
// it, and half of the packing was the kernel faulting pages in). The huge
// page where each array starts is mapped and timed before the array is
// written (MapHandedOut, all of them at once on the engine's threads: the
// kernel zeroes huge pages as fast as the threads that fault them in);
// once one is slow, the chunks' unmapped pages become small ones
// (aligned_buffer.h says why).

#ifndef MACE_CORE_PACKED_WEIGHT_ARENA_H_
#define MACE_CORE_PACKED_WEIGHT_ARENA_H_

#include <cstdint>
#include <memory>
#include <vector>

#include "mace/core/aligned_buffer.h"
#include "mace/core/packed_weight_source.h"

namespace mace {

class PackedWeightArena : public PackedWeightStore {
 public:
  // `expected_bytes`: about how much will be asked for in all (the
  // weights' size), which sizes the chunks.
  explicit PackedWeightArena(int64_t expected_bytes = 0);

  // `bytes` bytes (zero gives a distinct valid pointer) aligned to
  // AlignedBuffer::kAlignment, of unspecified content, valid as long as
  // the arena. Null when out of memory or `bytes` is negative.
  void *Allocate(int64_t bytes);

  // Every request of the op goes to Allocate (never *ready).
  std::unique_ptr<PackedWeightSource> SourceFor(int op_index) override;

  // Maps and times the huge page where each array handed out since the
  // last call starts, each page once, the pages shared among `pool`'s
  // threads; then, if huge pages were found slow, advises small ones for
  // what is not yet mapped.
  void MapHandedOut(ThreadPool *pool) override;

  // Bytes handed out, and bytes of the chunks they came from.
  int64_t allocated_bytes() const { return allocated_bytes_; }
  int64_t reserved_bytes() const { return reserved_bytes_; }

 private:
  class OpSource;

  // A huge page to map before its array is written: chunks move within
  // chunks_, their memory does not.
  struct PendingPage {
    const void *chunk_data;
    int64_t page;  // huge pages into the chunk
    bool operator<(const PendingPage &other) const;
    bool operator==(const PendingPage &other) const;
  };

  // Notes the huge page of chunks_[chunk] holding byte `offset`.
  void AddPendingPage(size_t chunk, int64_t offset);
  // Advises small pages for every chunk once huge ones are found slow.
  void FollowSlowHugePages();

  int64_t chunk_bytes_;
  std::vector<AlignedBuffer> chunks_;
  std::vector<PendingPage> pending_pages_;
  int64_t used_in_last_ = 0;  // bytes of chunks_.back() handed out
  int64_t allocated_bytes_ = 0;
  int64_t reserved_bytes_ = 0;
  bool small_pages_ = false;  // every chunk advised small pages
};

}  // namespace mace

#endif  // MACE_CORE_PACKED_WEIGHT_ARENA_H_
