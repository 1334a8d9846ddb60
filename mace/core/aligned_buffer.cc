#include "mace/core/aligned_buffer.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <new>
#include <utility>

#if defined(__linux__)
#include <sys/mman.h>
#include <unistd.h>
#endif

namespace mace {
namespace {

constexpr size_t kHugePageBytes = size_t{2} << 20;

// A fresh huge page that takes longer than this to map costs more than its
// 512 small pages would (about 0.9 ms on the hosts measured; a huge page
// the host still backs takes 0.1-0.4 ms, one it must back again 2.5-6 ms).
constexpr std::chrono::microseconds kSlowHugePage{2000};

// A buffer's part past its last whole huge page is mapped as one more huge
// page when at least this long: a fresh huge page took 0.32-0.44 ms here
// against 0.77-0.90 ms for the 1.8 MB of small pages of ShuffleNet v2's
// arena (2026-12-02, Intel host, 14 of 15 fresh processes each,
// MADV_POPULATE_WRITE), so small pages cost about as much as a huge one
// from ~0.8 MB on; the rest of the page is address space, and resident
// memory once written.
constexpr size_t kMinHugeTailBytes = size_t{1} << 20;

// Below this a buffer is mapped by one thread: waking another costs more
// than the ~60 small pages it would map.
constexpr size_t kMinParallelPrefaultBytes = size_t{256} << 10;

std::atomic<bool> g_huge_pages_slow{false};

bool HugePagesSlow() {
  return g_huge_pages_slow.load(std::memory_order_relaxed);
}

size_t RoundUp(size_t value, size_t multiple) {
  return (value + multiple - 1) / multiple * multiple;
}

#if defined(__linux__)
// Maps `bytes` (a multiple of the page size) starting on a huge page
// boundary: maps one huge page more, then unmaps the unaligned head and the
// tail. Sets *huge_bytes to the part advised for huge pages (none once
// they were found slow). Returns null on failure.
void *MapHugePageAligned(size_t bytes, size_t *huge_bytes) {
  const size_t span = bytes + kHugePageBytes;
  void *raw = mmap(nullptr, span, PROT_READ | PROT_WRITE,
                   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (raw == MAP_FAILED) return nullptr;
  const uintptr_t begin = reinterpret_cast<uintptr_t>(raw);
  const uintptr_t aligned = RoundUp(begin, kHugePageBytes);
  if (aligned > begin) munmap(raw, aligned - begin);
  const uintptr_t end = begin + span;
  if (end > aligned + bytes) {
    munmap(reinterpret_cast<void *>(aligned + bytes), end - aligned - bytes);
  }
  void *data = reinterpret_cast<void *>(aligned);
  // Only whole huge pages: a partial one at the end would waste up to 2 MiB.
  *huge_bytes = 0;
#if defined(MADV_HUGEPAGE) && defined(MADV_NOHUGEPAGE)
  // Advice only: failures are ignored. Small pages are asked for
  // explicitly, as a system set to `always` would give huge ones anyway.
  if (HugePagesSlow()) {
    madvise(data, bytes, MADV_NOHUGEPAGE);
  } else {
    *huge_bytes = bytes / kHugePageBytes * kHugePageBytes;
    madvise(data, *huge_bytes, MADV_HUGEPAGE);
  }
#endif
  return data;
}
#endif

void PopulateWrite(uintptr_t begin, uintptr_t end) {
#if defined(MADV_POPULATE_WRITE)
  // Kernels before 5.14 reject it; the pages then fault in on first touch.
  if (end > begin) {
    madvise(reinterpret_cast<void *>(begin), end - begin, MADV_POPULATE_WRITE);
  }
#else
  (void)begin;
  (void)end;
#endif
}

size_t PageBytes() {
#if defined(__linux__)
  static const size_t kBytes = [] {
    const long page = sysconf(_SC_PAGESIZE);
    return page > 0 ? static_cast<size_t>(page) : size_t{4096};
  }();
  return kBytes;
#else
  return 4096;
#endif
}

// What Allocate maps for `bytes`: whole small pages, and a tail of
// kMinHugeTailBytes or more rounded up to a huge page unless huge pages
// were found slow; 0 for a buffer left to operator new.
size_t MappedBytes(size_t bytes, bool huge_pages_slow) {
  const bool huge_tail =
      !huge_pages_slow && bytes % kHugePageBytes >= kMinHugeTailBytes;
  if (huge_tail) return RoundUp(bytes, kHugePageBytes);
  return bytes >= kHugePageBytes ? RoundUp(bytes, PageBytes()) : 0;
}

// Maps the small pages holding any of the addresses [begin, end); mapping
// a page that other allocations share changes none of its contents.
void PopulatePagesHolding(uintptr_t begin, uintptr_t end) {
  const uintptr_t page = PageBytes();
  PopulateWrite(begin / page * page, RoundUp(end, page));
}

}  // namespace

AlignedBuffer::AlignedBuffer(AlignedBuffer &&other) noexcept {
  *this = std::move(other);
}

AlignedBuffer &AlignedBuffer::operator=(AlignedBuffer &&other) noexcept {
  if (this != &other) {
    Release();
    std::swap(data_, other.data_);
    std::swap(size_, other.size_);
    std::swap(mapped_, other.mapped_);
    std::swap(mapped_bytes_, other.mapped_bytes_);
    std::swap(huge_bytes_, other.huge_bytes_);
  }
  return *this;
}

size_t PhysicalMemoryBytes() {
#if defined(__linux__)
  static const size_t kBytes = [] {
    const long pages = sysconf(_SC_PHYS_PAGES);
    const long page_size = sysconf(_SC_PAGESIZE);
    return pages > 0 && page_size > 0
               ? static_cast<size_t>(pages) * static_cast<size_t>(page_size)
               : size_t{0};
  }();
  return kBytes;
#else
  return 0;
#endif
}

bool AlignedBuffer::Allocate(size_t bytes) {
  Release();
  if (bytes == 0) return true;
  const size_t physical = PhysicalMemoryBytes();
  if (physical > 0 && bytes > physical) return false;
#if defined(__linux__)
  const size_t mapped_bytes = MappedBytes(bytes, HugePagesSlow());
  if (mapped_bytes > 0) {
    data_ = MapHugePageAligned(mapped_bytes, &huge_bytes_);
    if (data_ == nullptr) return false;
    mapped_ = true;
    mapped_bytes_ = mapped_bytes;
    size_ = bytes;
    return true;
  }
#endif
  data_ = ::operator new(bytes, std::align_val_t(kAlignment), std::nothrow);
  if (data_ == nullptr) return false;
  size_ = bytes;
  return true;
}

void AlignedBuffer::Prefault(size_t offset, size_t bytes) {
#if defined(__linux__)
  if (data_ == nullptr || offset >= size_ || bytes == 0) return;
  const uintptr_t page = PageBytes();
  const uintptr_t base = reinterpret_cast<uintptr_t>(data_);
  uintptr_t begin = (base + offset) / page * page;
  const uintptr_t end =
      RoundUp(base + offset + std::min(bytes, size_ - offset), page);
  // Only a mapped buffer has huge pages, and its data_ starts one; an
  // operator new buffer starts inside a page, so `begin` may lie below
  // base and must not be compared with base + huge_bytes_ (it once skipped
  // to the next 2 MiB boundary, leaving such buffers unmapped).
  while (huge_bytes_ > 0 && begin < end && begin < base + huge_bytes_ &&
         !HugePagesSlow()) {
    const uintptr_t next = RoundUp(begin + 1, kHugePageBytes);
    ProbeHugePage(begin - base);
    begin = next;
  }
  if (HugePagesSlow()) AdviseSmallPages();
  PopulatePagesHolding(begin, end);
#else
  (void)offset;
  (void)bytes;
#endif
}

void AlignedBuffer::Prefault(ThreadPool *pool) {
  const int threads = pool == nullptr ? 1 : pool->num_threads();
  if (threads < 2 || size_ < 2 * kMinParallelPrefaultBytes) {
    Prefault();
    return;
  }
#if defined(__linux__)
  // Huge pages are each probed by one thread. Once any is found slow the
  // rest stay unmapped, to be mapped as small pages with what follows,
  // after the advice (which only this thread may give).
  const int64_t huge_pages = static_cast<int64_t>(huge_bytes_ / kHugePageBytes);
  if (huge_pages > 0 && !HugePagesSlow()) {
    pool->ParallelFor(0, huge_pages, 1, [this](int64_t begin, int64_t end) {
      for (int64_t i = begin; i < end; ++i) {
        ProbeHugePage(static_cast<size_t>(i) * kHugePageBytes);
      }
    });
  }
  if (HugePagesSlow()) AdviseSmallPages();
  // Small pages in a piece per thread, at most 2 MiB each: 2 MiB of small
  // pages take about 1 ms to fault in here, and two threads fault in
  // nearly twice as fast as one.
  const size_t small_begin = huge_bytes_;
  if (small_begin >= size_) return;
  const size_t small_bytes = size_ - small_begin;
  const size_t piece = std::min(
      kHugePageBytes,
      std::max(kMinParallelPrefaultBytes,
               RoundUp((small_bytes + threads - 1) / threads, PageBytes())));
  const int64_t pieces = static_cast<int64_t>((small_bytes + piece - 1) / piece);
  const uintptr_t base = reinterpret_cast<uintptr_t>(data_) + small_begin;
  const uintptr_t limit = reinterpret_cast<uintptr_t>(data_) + size_;
  pool->ParallelFor(0, pieces, 1, [base, limit, piece](int64_t begin,
                                                       int64_t end) {
    for (int64_t i = begin; i < end; ++i) {
      const uintptr_t from = base + static_cast<size_t>(i) * piece;
      PopulatePagesHolding(from, std::min<uintptr_t>(from + piece, limit));
    }
  });
#endif
}

void AlignedBuffer::ProbeHugePage(size_t offset) {
#if defined(__linux__)
  if (offset >= huge_bytes_ || HugePagesSlow()) return;
  const uintptr_t begin = (reinterpret_cast<uintptr_t>(data_) + offset) /
                          kHugePageBytes * kHugePageBytes;
  const auto start = std::chrono::steady_clock::now();
  PopulateWrite(begin, begin + kHugePageBytes);
  if (std::chrono::steady_clock::now() - start > kSlowHugePage) {
    g_huge_pages_slow.store(true, std::memory_order_relaxed);
  }
#else
  (void)offset;
#endif
}

void AlignedBuffer::AdviseSmallPages() {
#if defined(__linux__) && defined(MADV_NOHUGEPAGE)
  // Huge pages already mapped stay; the rest fault in as small ones.
  if (huge_bytes_ > 0) madvise(data_, huge_bytes_, MADV_NOHUGEPAGE);
#endif
  huge_bytes_ = 0;
}

bool AlignedBuffer::HugePagesFoundSlow() {
  return g_huge_pages_slow.load(std::memory_order_relaxed);
}

void AlignedBuffer::SetHugePagesFoundSlowForTesting(bool slow) {
  g_huge_pages_slow.store(slow, std::memory_order_relaxed);
}

void AlignedBuffer::Release() {
  if (data_ != nullptr) {
#if defined(__linux__)
    if (mapped_) {
      munmap(data_, mapped_bytes_);
    } else {
      ::operator delete(data_, std::align_val_t(kAlignment));
    }
#else
    ::operator delete(data_, std::align_val_t(kAlignment));
#endif
  }
  data_ = nullptr;
  size_ = 0;
  mapped_ = false;
  mapped_bytes_ = 0;
  huge_bytes_ = 0;
}

}  // namespace mace
