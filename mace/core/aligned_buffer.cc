#include "mace/core/aligned_buffer.h"

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

size_t RoundUp(size_t value, size_t multiple) {
  return (value + multiple - 1) / multiple * multiple;
}

#if defined(__linux__)
// Maps `bytes` (a multiple of the page size) starting on a huge page
// boundary: maps one huge page more, then unmaps the unaligned head and the
// tail. Returns null on failure.
void *MapHugePageAligned(size_t bytes) {
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
  const size_t huge_bytes = bytes / kHugePageBytes * kHugePageBytes;
#if defined(MADV_HUGEPAGE)
  madvise(data, huge_bytes, MADV_HUGEPAGE);  // advice only: ignore failure
#else
  (void)huge_bytes;
#endif
  return data;
}
#endif

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
  }
  return *this;
}

bool AlignedBuffer::Allocate(size_t bytes) {
  Release();
  if (bytes == 0) return true;
#if defined(__linux__)
  if (bytes >= kHugePageBytes) {
    const long page = sysconf(_SC_PAGESIZE);
    const size_t mapped_bytes =
        RoundUp(bytes, page > 0 ? static_cast<size_t>(page) : 4096);
    data_ = MapHugePageAligned(mapped_bytes);
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

void AlignedBuffer::Prefault() {
#if defined(__linux__) && defined(MADV_POPULATE_WRITE)
  if (data_ == nullptr) return;
  const long page_size = sysconf(_SC_PAGESIZE);
  const uintptr_t page = page_size > 0 ? page_size : 4096;
  const uintptr_t begin = RoundUp(reinterpret_cast<uintptr_t>(data_), page);
  const uintptr_t end =
      (reinterpret_cast<uintptr_t>(data_) + size_) / page * page;
  // Advice only: kernels before 5.14 reject it, and the pages then fault
  // in on first touch as before.
  if (end > begin) {
    madvise(reinterpret_cast<void *>(begin), end - begin, MADV_POPULATE_WRITE);
  }
#endif
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
}

}  // namespace mace
