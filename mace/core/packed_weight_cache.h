// Packed weights kept across processes: the arrays ops compute from their
// weights at load (SGEMM panels, Winograd-transformed filters) are written
// to a file by the first load and mapped in place by later loads of the
// same model, which then neither pack nor fill fresh memory. Packing and
// the first touch of the ~130 MB it fills were two thirds of a ResNet-50
// load (issue 4 item 6); mapped from the page cache, that memory is also
// shared by every process running the model.
//
// A file belongs to one key, which the engine makes from everything the
// packed values depend on (graph, weights file, SGEMM ISA, layout version);
// a file of another key, or one that does not parse, is ignored and
// replaced. Within a file an array is found by the index of its op in the
// graph, its ordinal among that op's arrays and its size, so an engine that
// prepares a subset of the ops (other outputs) still finds its arrays.

#ifndef MACE_CORE_PACKED_WEIGHT_CACHE_H_
#define MACE_CORE_PACKED_WEIGHT_CACHE_H_

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "mace/core/packed_weight_arena.h"
#include "mace/core/packed_weight_source.h"
#include "mace/core/status.h"

namespace mace {

class PackedWeightCache : public PackedWeightStore {
 public:
  // Blobs start at multiples of this in the file (SIMD loads, cache lines).
  static constexpr int64_t kAlignment = 64;

  // `expected_bytes` sizes the memory of arrays packed anew
  // (PackedWeightArena).
  PackedWeightCache(std::string path, std::string key,
                    int64_t expected_bytes = 0);
  ~PackedWeightCache();
  PackedWeightCache(const PackedWeightCache &) = delete;
  PackedWeightCache &operator=(const PackedWeightCache &) = delete;

  // Maps the file when it holds arrays of this cache's key. A missing,
  // stale or damaged file is not an error, only a reason to pack anew:
  // returns false, saying why in *reason (may be null).
  bool Load(std::string *reason);

  // The source of the op at `op_index`: its requests are numbered in order.
  std::unique_ptr<PackedWeightSource> SourceFor(int op_index) override;
  // Maps the memory of the arrays packed anew (PackedWeightArena).
  void MapHandedOut(ThreadPool *pool) override {
    packed_anew_.MapHandedOut(pool);
  }

  // Arrays served from the file, and packed anew (into memory of this
  // cache's own) since Load.
  int hits() const { return hits_; }
  int misses() const { return misses_; }

  // When any array was packed anew, writes every array requested since
  // Load to a temporary file renamed over the cache file (mappings of the
  // old one stay valid). The arrays stay where they are.
  MaceStatus Save() const;

  const std::string &path() const { return path_; }

 private:
  class OpSource;
  struct Entry {
    int64_t bytes = 0;
    int64_t offset = 0;  // in the mapped file
  };
  struct Request {
    int op = 0;
    int ordinal = 0;
    int64_t bytes = 0;
    const void *data = nullptr;
  };
  using ArrayId = std::pair<int, int>;  // (op index, ordinal)

  void *Acquire(int op, int ordinal, int64_t bytes, bool *ready);
  bool ParseMapped(std::string *reason);
  void Unmap();

  std::string path_;
  std::string key_;
  const unsigned char *mapped_ = nullptr;
  int64_t mapped_bytes_ = 0;
  std::map<ArrayId, Entry> entries_;
  std::vector<Request> requests_;
  PackedWeightArena packed_anew_;
  int hits_ = 0;
  int misses_ = 0;
};

}  // namespace mace

#endif  // MACE_CORE_PACKED_WEIGHT_CACHE_H_
