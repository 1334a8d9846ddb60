// AlignedBuffer / AlignedArray: alignment, usable size, moves, a clean
// failure when the memory cannot be had, and prefaulting (by range, and
// with small pages once huge ones were found slow).

#include "mace/core/aligned_buffer.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdint>
#include <cstring>
#include <utility>

#include "mace/core/thread_pool.h"
#include "tests/common/memory_maps.h"

namespace mace {
namespace {

bool IsAligned(const void *p, size_t alignment) {
  return reinterpret_cast<uintptr_t>(p) % alignment == 0;
}

TEST(AlignedBufferTest, SmallAndHugeAllocationsAreAlignedAndWritable) {
  // Below, at and above the huge page threshold (2 MiB), and not a
  // multiple of the page size.
  for (size_t bytes :
       {size_t{1}, size_t{4097}, size_t{2} << 20, (size_t{5} << 20) + 12345}) {
    AlignedBuffer buffer;
    ASSERT_TRUE(buffer.Allocate(bytes)) << bytes;
    ASSERT_NE(buffer.data(), nullptr);
    EXPECT_EQ(buffer.size(), bytes);
    EXPECT_TRUE(IsAligned(buffer.data(), AlignedBuffer::kAlignment)) << bytes;
    auto *bytes_view = static_cast<unsigned char *>(buffer.data());
    std::memset(bytes_view, 0xab, bytes);
    EXPECT_EQ(bytes_view[0], 0xab);
    EXPECT_EQ(bytes_view[bytes - 1], 0xab);
  }
}

TEST(AlignedBufferTest, ZeroBytesIsAnEmptySuccess) {
  AlignedBuffer buffer;
  EXPECT_TRUE(buffer.Allocate(0));
  EXPECT_EQ(buffer.data(), nullptr);
  EXPECT_EQ(buffer.size(), 0u);
}

TEST(AlignedBufferTest, ImpossibleSizeFailsAndLeavesTheBufferEmpty) {
  AlignedBuffer buffer;
  ASSERT_TRUE(buffer.Allocate(1024));
  EXPECT_FALSE(buffer.Allocate(size_t{1} << 60));
  EXPECT_EQ(buffer.data(), nullptr);
  EXPECT_EQ(buffer.size(), 0u);

  AlignedArray<float> array;
  EXPECT_FALSE(array.Allocate(size_t{1} << 58));
  EXPECT_TRUE(array.empty());
}

// Under overcommit (vm.overcommit_memory = 1, as on many phones) such a
// mapping succeeds, and writing it gets the process killed.
TEST(AlignedBufferTest, MoreThanTheMachinesMemoryFails) {
  const size_t physical = PhysicalMemoryBytes();
  ASSERT_GT(physical, 0u);
  AlignedBuffer buffer;
  EXPECT_FALSE(buffer.Allocate(physical + 4096));
  EXPECT_EQ(buffer.data(), nullptr);
}

TEST(AlignedBufferTest, MovesTransferOwnership) {
  AlignedArray<float> a;
  ASSERT_TRUE(a.Allocate(size_t{3} << 20));  // huge-page path
  a[0] = 1.5f;
  a[a.size() - 1] = 2.5f;
  const float *storage = a.data();

  AlignedArray<float> b = std::move(a);
  EXPECT_TRUE(a.empty());  // NOLINT(bugprone-use-after-move): moved-from state
  EXPECT_EQ(b.data(), storage);
  EXPECT_EQ(b[0], 1.5f);
  EXPECT_EQ(b[b.size() - 1], 2.5f);

  AlignedArray<float> c;
  ASSERT_TRUE(c.Allocate(16));
  c = std::move(b);
  EXPECT_EQ(c.data(), storage);
  c.Release();
  EXPECT_TRUE(c.empty());
  EXPECT_EQ(c.data(), nullptr);
}

// Prefault of any range, whole, partial, past the end or empty, maps
// without touching contents: what was written stays, and the rest is
// writable.
TEST(AlignedBufferTest, PrefaultOfAnyRangeKeepsContents) {
  for (size_t bytes : {size_t{100}, size_t{5} << 20}) {
    AlignedBuffer buffer;
    ASSERT_TRUE(buffer.Allocate(bytes));
    auto *data = static_cast<unsigned char *>(buffer.data());
    std::memset(data, 0x5a, bytes / 3);
    buffer.Prefault(bytes / 3 - 1, bytes / 3);
    buffer.Prefault(bytes - 1, bytes);  // clipped at the end
    buffer.Prefault(bytes, 10);         // past the end: nothing
    buffer.Prefault(0, 0);
    buffer.ProbeHugePage(bytes / 2);
    buffer.ProbeHugePage(bytes);  // past the end: nothing
    buffer.Prefault();
    for (size_t i = 0; i < bytes / 3; ++i) {
      ASSERT_EQ(data[i], 0x5a) << bytes << " byte " << i;
    }
    std::memset(data + bytes / 3, 0xa5, bytes - bytes / 3);
    EXPECT_EQ(data[bytes - 1], 0xa5);
  }
}

// Prefault on a pool's threads maps the whole buffer, piece by piece,
// without touching what was written, slow huge pages or not.
TEST(AlignedBufferTest, PrefaultOnThreadsKeepsContents) {
  const bool was_slow = AlignedBuffer::HugePagesFoundSlow();
  ThreadPool pool(2, AFFINITY_NONE);
  ASSERT_EQ(pool.Init(), MaceStatus::MACE_SUCCESS);
  for (bool slow : {false, true}) {
    for (size_t bytes : {size_t{100}, size_t{3} << 20, (size_t{9} << 20) + 5}) {
      AlignedBuffer::SetHugePagesFoundSlowForTesting(false);
      AlignedBuffer buffer;
      ASSERT_TRUE(buffer.Allocate(bytes));
      AlignedBuffer::SetHugePagesFoundSlowForTesting(slow);
      auto *data = static_cast<unsigned char *>(buffer.data());
      std::memset(data, 0x5a, bytes / 2);
      buffer.Prefault(&pool);
      buffer.Prefault(nullptr);
      for (size_t i = 0; i < bytes / 2; ++i) {
        ASSERT_EQ(data[i], 0x5a) << bytes << " byte " << i;
      }
      std::memset(data + bytes / 2, 0xa5, bytes - bytes / 2);
      EXPECT_EQ(data[bytes - 1], 0xa5);
    }
  }
  AlignedBuffer::SetHugePagesFoundSlowForTesting(was_slow);
}

#if defined(__linux__)
// Buffers under 1 MiB come from operator new and start inside a page
// (those of 1-2 MiB too once huge pages were found slow): Prefault maps
// every page of them (it once mapped none of a buffer that did not cross a
// 2 MiB boundary), by range and on a pool's threads, as it does of a
// buffer of 1-2 MiB mapped as one huge page.
TEST(AlignedBufferTest, PrefaultMapsEveryPageOfABufferUnderAHugePage) {
  if (!test::PopulateWriteMapsPages()) {
    GTEST_SKIP() << "MADV_POPULATE_WRITE maps nothing here (a kernel "
                    "before 5.14, or qemu-user, which ignores it)";
  }
  const bool was_slow = AlignedBuffer::HugePagesFoundSlow();
  ThreadPool pool(2, AFFINITY_NONE);
  ASSERT_EQ(pool.Init(), MaceStatus::MACE_SUCCESS);
  for (size_t bytes : {size_t{300} << 10, (size_t{1} << 20) + 100,
                       (size_t{2} << 20) - 4096}) {
    for (int how = 0; how < 6; ++how) {
      AlignedBuffer::SetHugePagesFoundSlowForTesting(how >= 3);
      AlignedBuffer buffer;
      ASSERT_TRUE(buffer.Allocate(bytes));
      if (how % 3 == 0) buffer.Prefault();
      if (how % 3 == 1) buffer.Prefault(&pool);
      if (how % 3 == 2) {
        buffer.Prefault(bytes / 2, bytes);
        buffer.Prefault(0, bytes / 2);
      }
      const long page = sysconf(_SC_PAGESIZE);
      const uintptr_t first =
          reinterpret_cast<uintptr_t>(buffer.data()) / page;
      const uintptr_t last =
          (reinterpret_cast<uintptr_t>(buffer.data()) + bytes - 1) / page;
      EXPECT_EQ(test::ResidentPages(buffer.data(), bytes),
                static_cast<long>(last - first + 1))
          << bytes << " bytes, way " << how;
    }
  }
  AlignedBuffer::SetHugePagesFoundSlowForTesting(was_slow);
}

// A buffer, or the part of one past its last whole huge page, of 1 MiB or
// more is mapped up to the next huge page boundary, so that its end can be
// one huge page; not once huge pages were found slow.
TEST(AlignedBufferTest, TailsOfAMebibyteOrMoreAreMappedAsAHugePage) {
  const bool was_slow = AlignedBuffer::HugePagesFoundSlow();
  constexpr size_t kHuge = size_t{2} << 20;
  for (bool slow : {false, true}) {
    AlignedBuffer::SetHugePagesFoundSlowForTesting(slow);
    for (size_t bytes : {(size_t{1} << 20) + 100, kHuge + (size_t{3} << 19),
                         (size_t{1} << 20) - 64, kHuge + (size_t{1} << 19)}) {
      AlignedBuffer buffer;
      ASSERT_TRUE(buffer.Allocate(bytes));
      std::memset(buffer.data(), 0x3c, bytes);
      EXPECT_EQ(static_cast<unsigned char *>(buffer.data())[bytes - 1], 0x3c);
      if (slow || bytes % kHuge < (size_t{1} << 20)) continue;
      EXPECT_TRUE(IsAligned(buffer.data(), kHuge)) << bytes;
      // Mapped (mincore answers) to the boundary, and not past it: Allocate
      // unmaps at least a page of what it over-maps for alignment there.
      const auto *end = static_cast<const char *>(buffer.data()) + bytes;
      const size_t rest = kHuge - bytes % kHuge;
      EXPECT_GE(test::ResidentPages(end, rest), 0) << bytes;
      EXPECT_EQ(test::ResidentPages(end + rest, 1), -1) << bytes;
    }
  }
  AlignedBuffer::SetHugePagesFoundSlowForTesting(was_slow);
}

// A mapped buffer: its huge pages and the small-page tail after them,
// split among a pool's threads, all end up mapped, as do all of its pages
// as small ones when huge pages are found slow.
TEST(AlignedBufferTest, PrefaultOnThreadsMapsEveryPageOfALargeBuffer) {
  if (!test::PopulateWriteMapsPages()) {
    GTEST_SKIP() << "MADV_POPULATE_WRITE maps nothing here";
  }
  const bool was_slow = AlignedBuffer::HugePagesFoundSlow();
  ThreadPool pool(2, AFFINITY_NONE);
  ASSERT_EQ(pool.Init(), MaceStatus::MACE_SUCCESS);
  for (bool slow : {false, true}) {
    AlignedBuffer::SetHugePagesFoundSlowForTesting(false);
    const size_t bytes = (size_t{5} << 20) + 100;
    AlignedBuffer buffer;
    ASSERT_TRUE(buffer.Allocate(bytes));
    AlignedBuffer::SetHugePagesFoundSlowForTesting(slow);
    buffer.Prefault(&pool);
    const long page = sysconf(_SC_PAGESIZE);
    EXPECT_EQ(test::ResidentPages(buffer.data(), bytes),
              static_cast<long>((bytes + page - 1) / page))
        << (slow ? "small pages" : "huge pages");
  }
  AlignedBuffer::SetHugePagesFoundSlowForTesting(was_slow);
}

// Huge pages found slow while a buffer's pages are mapped on a pool's
// threads: those not yet mapped come as small ones.
TEST(AlignedBufferTest, HugePagesFoundSlowOnThreadsGiveSmallPages) {
  const bool was_slow = AlignedBuffer::HugePagesFoundSlow();
  ThreadPool pool(2, AFFINITY_NONE);
  ASSERT_EQ(pool.Init(), MaceStatus::MACE_SUCCESS);
  AlignedBuffer::SetHugePagesFoundSlowForTesting(false);
  AlignedBuffer buffer;
  ASSERT_TRUE(buffer.Allocate(size_t{8} << 20));
  AlignedBuffer::SetHugePagesFoundSlowForTesting(true);
  buffer.Prefault(&pool);
  std::memset(buffer.data(), 1, buffer.size());
  EXPECT_EQ(test::AnonHugePagesKb(buffer.data()), 0);
  AlignedBuffer::SetHugePagesFoundSlowForTesting(was_slow);
}

// Once this process has found fresh huge pages slow, later buffers are
// mapped in small pages only, even where the system gives huge ones to
// every mapping.
TEST(AlignedBufferTest, HugePagesFoundSlowGiveSmallPages) {
  const bool was_slow = AlignedBuffer::HugePagesFoundSlow();
  AlignedBuffer::SetHugePagesFoundSlowForTesting(true);
  AlignedBuffer buffer;
  ASSERT_TRUE(buffer.Allocate(size_t{8} << 20));
  buffer.Prefault();
  std::memset(buffer.data(), 1, buffer.size());
  EXPECT_EQ(test::AnonHugePagesKb(buffer.data()), 0);
  AlignedBuffer::SetHugePagesFoundSlowForTesting(was_slow);
}
#endif

}  // namespace
}  // namespace mace
