// PackedWeightArena: aligned, disjoint arrays that stay valid, chunks
// shared by small arrays, large ones on their own, bad sizes refused, their
// memory mapped on a pool's threads without a byte changed, and small pages
// for what is left once huge ones are found slow.

#include "mace/core/packed_weight_arena.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <utility>
#include <vector>

#include "mace/core/thread_pool.h"
#include "tests/common/memory_maps.h"

namespace mace {
namespace {

struct Span {
  unsigned char *data;
  int64_t bytes;
};

void ExpectAlignedAndDisjoint(const std::vector<Span> &spans) {
  for (size_t i = 0; i < spans.size(); ++i) {
    ASSERT_NE(spans[i].data, nullptr) << "array " << i;
    EXPECT_EQ(
        reinterpret_cast<uintptr_t>(spans[i].data) % AlignedBuffer::kAlignment,
        0u)
        << "array " << i;
    for (size_t j = 0; j < i; ++j) {
      const bool apart =
          spans[i].data + std::max<int64_t>(spans[i].bytes, 1) <=
              spans[j].data ||
          spans[j].data + std::max<int64_t>(spans[j].bytes, 1) <= spans[i].data;
      EXPECT_TRUE(apart) << "arrays " << j << " and " << i << " overlap";
    }
  }
}

TEST(PackedWeightArenaTest, ArraysAreAlignedDisjointAndKeepTheirValues) {
  PackedWeightArena arena(100 << 10);
  // Odd sizes, an empty one, and one larger than a chunk between small
  // ones (the chunk being cut must stay in use after it).
  const std::vector<int64_t> sizes = {1,       0,  100, 4096,      7,
                                      3 << 20, 64, 129, 100 << 10, 5};
  std::vector<Span> spans;
  for (int64_t bytes : sizes) {
    auto *data = static_cast<unsigned char *>(arena.Allocate(bytes));
    spans.push_back(Span{data, bytes});
    if (data != nullptr) {
      std::memset(data, static_cast<int>(spans.size()), bytes);
    }
  }
  ExpectAlignedAndDisjoint(spans);
  for (size_t i = 0; i < spans.size(); ++i) {
    for (int64_t b = 0; b < spans[i].bytes; ++b) {
      ASSERT_EQ(spans[i].data[b], static_cast<unsigned char>(i + 1))
          << "array " << i << " byte " << b << " was overwritten";
    }
  }
  int64_t total = 0;
  for (int64_t bytes : sizes) total += bytes;
  EXPECT_EQ(arena.allocated_bytes(), total);
}

TEST(PackedWeightArenaTest, SmallArraysShareAChunk) {
  PackedWeightArena arena(1 << 20);
  for (int i = 0; i < 100; ++i) ASSERT_NE(arena.Allocate(1000), nullptr);
  // 100 arrays of ~1 KB fit the first chunk (1.25 MB): one reservation.
  EXPECT_LE(arena.reserved_bytes(), int64_t{2} << 20);
  EXPECT_GE(arena.reserved_bytes(), arena.allocated_bytes());
}

TEST(PackedWeightArenaTest, ALargeArrayDoesNotWasteTheChunkBeingCut) {
  PackedWeightArena arena(0);  // the smallest chunks
  auto *first = static_cast<unsigned char *>(arena.Allocate(64));
  ASSERT_NE(first, nullptr);
  ASSERT_NE(arena.Allocate(1 << 20), nullptr);  // larger than a chunk
  auto *next = static_cast<unsigned char *>(arena.Allocate(64));
  ASSERT_NE(next, nullptr);
  EXPECT_EQ(next, first + 64) << "the small chunk was left behind";
}

TEST(PackedWeightArenaTest, RefusesNegativeSizes) {
  PackedWeightArena arena(1 << 20);
  EXPECT_EQ(arena.Allocate(-1), nullptr);
  EXPECT_EQ(arena.allocated_bytes(), 0);
}

TEST(PackedWeightArenaTest, SourcesHandOutFreshArraysNeverReady) {
  PackedWeightArena arena(1 << 20);
  std::unique_ptr<PackedWeightSource> a = arena.SourceFor(0);
  std::unique_ptr<PackedWeightSource> b = arena.SourceFor(7);
  bool ready = true;
  void *x = a->Acquire(256, &ready);
  EXPECT_FALSE(ready);
  ready = true;
  void *y = b->Acquire(256, &ready);
  EXPECT_FALSE(ready);
  ready = true;
  void *z = a->Acquire(256, &ready);
  EXPECT_FALSE(ready);
  ExpectAlignedAndDisjoint({{static_cast<unsigned char *>(x), 256},
                            {static_cast<unsigned char *>(y), 256},
                            {static_cast<unsigned char *>(z), 256}});
}

// MapHandedOut maps the arrays handed out since the last call, on a
// pool's threads or the caller's, and changes no byte of them: an op may
// have written its array already (packing done at once, not deferred).
TEST(PackedWeightArenaTest, MapHandedOutKeepsWhatIsWritten) {
  ThreadPool pool(2, AFFINITY_NONE);
  ASSERT_EQ(pool.Init(), MaceStatus::MACE_SUCCESS);
  for (ThreadPool *threads : {static_cast<ThreadPool *>(nullptr), &pool}) {
    PackedWeightArena arena(int64_t{6} << 20);
    std::vector<Span> spans;
    // Several arrays in each huge page, one across pages, one of its own.
    for (int64_t bytes : {int64_t{700} << 10, int64_t{700} << 10,
                          int64_t{3} << 20, int64_t{900} << 10,
                          int64_t{9} << 20, int64_t{100}}) {
      spans.push_back(
          Span{static_cast<unsigned char *>(arena.Allocate(bytes)), bytes});
    }
    std::memset(spans[0].data, 0x11, spans[0].bytes);  // written at once
    arena.MapHandedOut(threads);
    for (size_t i = 1; i < spans.size(); ++i) {
      std::memset(spans[i].data, static_cast<int>(i), spans[i].bytes);
    }
    arena.MapHandedOut(threads);  // nothing new: nothing to do
    spans.push_back(
        Span{static_cast<unsigned char *>(arena.Allocate(5000)), 5000});
    std::memset(spans.back().data, 0x77, 5000);
    arena.MapHandedOut(threads);
    ExpectAlignedAndDisjoint(spans);
    for (size_t i = 0; i < spans.size(); ++i) {
      const unsigned char expected =
          i == 0 ? 0x11 : i + 1 == spans.size() ? 0x77 : i;
      for (int64_t b = 0; b < spans[i].bytes; ++b) {
        ASSERT_EQ(spans[i].data[b], expected)
            << "array " << i << " byte " << b
            << (threads != nullptr ? " (pool)" : " (caller)");
      }
    }
  }
}

#if defined(__linux__)
// Huge pages found slow before the arrays are mapped leave them all to
// small pages, on a pool's threads as on the caller's.
TEST(PackedWeightArenaTest, HugePagesFoundSlowBeforeMappingGiveSmallPages) {
  const bool was_slow = AlignedBuffer::HugePagesFoundSlow();
  ThreadPool pool(2, AFFINITY_NONE);
  ASSERT_EQ(pool.Init(), MaceStatus::MACE_SUCCESS);
  for (ThreadPool *threads : {static_cast<ThreadPool *>(nullptr), &pool}) {
    AlignedBuffer::SetHugePagesFoundSlowForTesting(false);
    PackedWeightArena arena(int64_t{8} << 20);
    auto *a = static_cast<unsigned char *>(arena.Allocate(int64_t{3} << 20));
    auto *b = static_cast<unsigned char *>(arena.Allocate(int64_t{12} << 20));
    AlignedBuffer::SetHugePagesFoundSlowForTesting(true);
    arena.MapHandedOut(threads);
    std::memset(a, 1, int64_t{3} << 20);
    std::memset(b, 2, int64_t{12} << 20);
    EXPECT_EQ(test::AnonHugePagesKb(a), 0);
    EXPECT_EQ(test::AnonHugePagesKb(b), 0);
  }
  AlignedBuffer::SetHugePagesFoundSlowForTesting(was_slow);
}

// Once huge pages are found slow, every chunk's pages not yet mapped come
// as small ones: at most the huge page probed where each array starts
// stays huge, in the chunks cut before as in the new one.
TEST(PackedWeightArenaTest, HugePagesFoundSlowLeaveOnlyProbedOnes) {
  const bool was_slow = AlignedBuffer::HugePagesFoundSlow();
  AlignedBuffer::SetHugePagesFoundSlowForTesting(false);
  PackedWeightArena arena(int64_t{8} << 20);
  std::vector<Span> spans;
  for (int64_t bytes : {int64_t{1} << 20, int64_t{12} << 20}) {
    spans.push_back(
        Span{static_cast<unsigned char *>(arena.Allocate(bytes)), bytes});
  }
  AlignedBuffer::SetHugePagesFoundSlowForTesting(true);
  spans.push_back(
      Span{static_cast<unsigned char *>(arena.Allocate(int64_t{1} << 20)),
           int64_t{1} << 20});
  ExpectAlignedAndDisjoint(spans);
  for (const Span &span : spans) std::memset(span.data, 7, span.bytes);
  // The shared chunk (two arrays, one probed page) and the large array's.
  EXPECT_LE(test::AnonHugePagesKb(spans[0].data), 2048);
  EXPECT_LE(test::AnonHugePagesKb(spans[1].data), 2048);
  AlignedBuffer::SetHugePagesFoundSlowForTesting(was_slow);
}
#endif

}  // namespace
}  // namespace mace
