// Uninitialised, aligned storage for the large arrays the engine fills
// itself: packed weights and the intermediate arena.
//
// Allocations of at least 2 MiB are mapped with their 2 MiB-aligned part
// advised for transparent huge pages (Linux madvise; the system default is
// often `madvise`): filling ResNet-50's ~100 MB of packed filters then
// faults ~50 huge pages instead of ~25,000 small ones, which was a fifth of
// the model's load time. Smaller allocations come from aligned operator new.

#ifndef MACE_CORE_ALIGNED_BUFFER_H_
#define MACE_CORE_ALIGNED_BUFFER_H_

#include <cstddef>
#include <type_traits>
#include <utility>

namespace mace {

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
  // is not available.
  bool Allocate(size_t bytes);
  void Release();
  // Maps every page of the buffer now, in one system call, instead of on
  // each page's first write (Linux 5.14+ MADV_POPULATE_WRITE; elsewhere
  // nothing). For memory that will be written whole soon.
  void Prefault();

  void *data() const { return data_; }
  size_t size() const { return size_; }

 private:
  void *data_ = nullptr;
  size_t size_ = 0;
  bool mapped_ = false;  // from mmap (munmap it) rather than operator new
  size_t mapped_bytes_ = 0;
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
