// Uninitialised, aligned storage for the large arrays the engine fills
// itself: packed weights and the intermediate arena.
//
// Allocations of at least 2 MiB are mapped with their 2 MiB-aligned part
// advised for transparent huge pages (Linux madvise; the system default is
// often `madvise`): filling ResNet-50's ~100 MB of packed filters then
// faults ~50 huge pages instead of ~25,000 small ones, which was a fifth of
// the model's load time. A part past the last whole huge page of 1 MiB or
// more (a whole allocation of 1-2 MiB too, such as a small model's arena)
// is rounded up to one more huge page, cheaper to map than its small
// pages. Smaller allocations come from aligned operator new.
//
// Fresh huge pages are not cheap everywhere. In a VM whose host takes back
// the guest's free memory (virtio-balloon free page reporting), a huge
// page often comes from a block the host has reclaimed and must back again:
// on one such AMD host a fresh huge page took 2.5-3 ms against 0.2 ms on
// an Intel host of the same kind, and against about 0.9 ms for 2 MiB of
// small pages on either (measured 2026-11-26; a ResNet-50 load 270-490 ms
// against 107-128 ms without huge pages). So huge pages are mapped one at
// a time and timed (Prefault, and the packed weight arena probes the first
// page of each array it hands out): the first that takes longer than small
// pages would (kSlowHugePage) switches the process to small pages, for
// what is not yet mapped and for every later allocation.

#ifndef MACE_CORE_ALIGNED_BUFFER_H_
#define MACE_CORE_ALIGNED_BUFFER_H_

#include <cstddef>
#include <type_traits>
#include <utility>

#include "mace/core/thread_pool.h"

namespace mace {

// The machine's physical memory in bytes (0 when the system does not say).
size_t PhysicalMemoryBytes();

class AlignedBuffer {
 public:
  static constexpr size_t kAlignment = 64;

  AlignedBuffer() = default;
  ~AlignedBuffer() { Release(); }
  AlignedBuffer(AlignedBuffer &&other) noexcept;
  AlignedBuffer &operator=(AlignedBuffer &&other) noexcept;
  AlignedBuffer(const AlignedBuffer &) = delete;
  AlignedBuffer &operator=(const AlignedBuffer &) = delete;

  // Replaces the storage by `bytes` bytes of unspecified content, aligned
  // to kAlignment. Returns false, leaving the buffer empty, when the memory
  // is not available, or `bytes` exceeds the machine's memory: mapped
  // through overcommit, such a buffer would get the process killed once
  // written (or prefaulted), where a bad model must only get an error.
  bool Allocate(size_t bytes);
  void Release();
  // Maps the pages of bytes [offset, offset + bytes) now rather than on
  // each page's first write (Linux 5.14+ MADV_POPULATE_WRITE; elsewhere
  // nothing), for memory that will be written soon, huge pages one at a
  // time through ProbeHugePage. Advice only: the contents stay unspecified
  // and failures are ignored.
  void Prefault(size_t offset, size_t bytes);
  void Prefault() { Prefault(0, size_); }
  // The whole buffer in pieces (huge pages, up to 2 MiB of small ones)
  // shared among `pool`'s threads, as the kernel zeroes fresh pages as
  // fast as the threads that fault them in; by the caller alone without a
  // pool or for a buffer under 512 KiB.
  void Prefault(ThreadPool *pool);

  // Maps the huge page holding byte `offset`, if the buffer has one there
  // and huge pages are not yet found slow, and times it: longer than
  // kSlowHugePage marks them slow for the whole process.
  void ProbeHugePage(size_t offset);

  // Advises small pages for what is not yet mapped (a buffer allocated
  // before huge pages were found slow).
  void AdviseSmallPages();

  // Whether this process has found fresh huge pages slow and allocates
  // small pages only; the setter is for tests.
  static bool HugePagesFoundSlow();
  static void SetHugePagesFoundSlowForTesting(bool slow);
  void *data() const { return data_; }
  size_t size() const { return size_; }

 private:
  void *data_ = nullptr;
  size_t size_ = 0;
  bool mapped_ = false;  // from mmap (munmap it) rather than operator new
  size_t mapped_bytes_ = 0;
  size_t huge_bytes_ = 0;  // from data_, advised for huge pages
};

// An AlignedBuffer seen as `count` elements of a trivially copyable T.
template <typename T>
class AlignedArray {
  static_assert(std::is_trivially_copyable<T>::value,
                "AlignedArray holds raw, uninitialised elements");

 public:
  AlignedArray() = default;
  AlignedArray(AlignedArray &&other) noexcept { *this = std::move(other); }
  AlignedArray &operator=(AlignedArray &&other) noexcept {
    if (this != &other) {
      buffer_ = std::move(other.buffer_);
      count_ = other.count_;
      other.count_ = 0;
    }
    return *this;
  }

  // `count` elements of unspecified value; false (and empty) when out of
  // memory.
  bool Allocate(size_t count) {
    count_ = buffer_.Allocate(count * sizeof(T)) ? count : 0;
    return count_ == count;
  }
  void Release() {
    buffer_.Release();
    count_ = 0;
  }

  T *data() { return static_cast<T *>(buffer_.data()); }
  const T *data() const { return static_cast<const T *>(buffer_.data()); }
  size_t size() const { return count_; }
  bool empty() const { return count_ == 0; }
  T &operator[](size_t i) { return data()[i]; }
  const T &operator[](size_t i) const { return data()[i]; }

 private:
  AlignedBuffer buffer_;
  size_t count_ = 0;
};

}  // namespace mace

#endif  // MACE_CORE_ALIGNED_BUFFER_H_
