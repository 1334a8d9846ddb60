#include "mace/core/packed_weight_cache.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <limits>

namespace mace {
namespace {

// The file: a header, the key, a table of entries, then the blobs.
constexpr char kMagic[8] = {'M', 'A', 'C', 'E', 'P', 'K', 'W', '1'};
// Read back as another value on a machine of the other byte order.
constexpr uint32_t kByteOrderMark = 0x01020304u;
// A key is a line of text; anything longer is not a cache file of ours.
constexpr uint32_t kMaxKeyBytes = 4096;

struct FileHeader {
  char magic[8];
  uint32_t byte_order;
  uint32_t key_bytes;
  uint64_t entry_count;
};

struct FileEntry {
  int32_t op;
  int32_t ordinal;
  int64_t bytes;
  int64_t offset;
};

int64_t AlignUp(int64_t value) {
  return (value + PackedWeightCache::kAlignment - 1) /
         PackedWeightCache::kAlignment * PackedWeightCache::kAlignment;
}

// Closes a FILE on every path out of Save.
struct FileCloser {
  void operator()(std::FILE *file) const { std::fclose(file); }
};

}  // namespace

class PackedWeightCache::OpSource : public PackedWeightSource {
 public:
  OpSource(PackedWeightCache *cache, int op) : cache_(cache), op_(op) {}
  void *Acquire(int64_t bytes, bool *ready) override {
    return cache_->Acquire(op_, next_ordinal_++, bytes, ready);
  }

 private:
  PackedWeightCache *cache_;
  int op_;
  int next_ordinal_ = 0;
};

PackedWeightCache::PackedWeightCache(std::string path, std::string key,
                                     int64_t expected_bytes)
    : path_(std::move(path)),
      key_(std::move(key)),
      packed_anew_(expected_bytes) {}

PackedWeightCache::~PackedWeightCache() { Unmap(); }

void PackedWeightCache::Unmap() {
  if (mapped_ != nullptr) {
    munmap(const_cast<unsigned char *>(mapped_),
           static_cast<size_t>(mapped_bytes_));
  }
  mapped_ = nullptr;
  mapped_bytes_ = 0;
  entries_.clear();
}

bool PackedWeightCache::Load(std::string *reason) {
  std::string ignored;
  if (reason == nullptr) reason = &ignored;
  Unmap();
  const int fd = open(path_.c_str(), O_RDONLY);
  if (fd < 0) {
    *reason = "cannot open '" + path_ + "'";
    return false;
  }
  struct stat info;
  if (fstat(fd, &info) != 0 || info.st_size <= 0) {
    close(fd);
    *reason = "'" + path_ + "' is empty or cannot be read";
    return false;
  }
  void *mapped = mmap(nullptr, static_cast<size_t>(info.st_size), PROT_READ,
                      MAP_PRIVATE, fd, 0);
  close(fd);
  if (mapped == MAP_FAILED) {
    *reason = "cannot map '" + path_ + "'";
    return false;
  }
  mapped_ = static_cast<const unsigned char *>(mapped);
  mapped_bytes_ = static_cast<int64_t>(info.st_size);
  if (!ParseMapped(reason)) {
    *reason = "'" + path_ + "': " + *reason;
    Unmap();
    return false;
  }
  return true;
}

bool PackedWeightCache::ParseMapped(std::string *reason) {
  FileHeader header;
  if (mapped_bytes_ < static_cast<int64_t>(sizeof(header))) {
    *reason = "shorter than the header";
    return false;
  }
  std::memcpy(&header, mapped_, sizeof(header));
  if (std::memcmp(header.magic, kMagic, sizeof(kMagic)) != 0 ||
      header.byte_order != kByteOrderMark) {
    *reason = "not a packed weight file of this format";
    return false;
  }
  if (header.key_bytes != key_.size() || header.key_bytes > kMaxKeyBytes ||
      mapped_bytes_ < static_cast<int64_t>(sizeof(header) + key_.size()) ||
      std::memcmp(mapped_ + sizeof(header), key_.data(), key_.size()) != 0) {
    *reason = "written for another model, weights file, CPU or build";
    return false;
  }
  const int64_t table = sizeof(header) + key_.size();
  const uint64_t room =
      static_cast<uint64_t>(mapped_bytes_ - table) / sizeof(FileEntry);
  if (header.entry_count > room) {
    *reason = "its table of " + std::to_string(header.entry_count) +
              " entries runs past the end of the file";
    return false;
  }
  const int64_t blobs =
      table + static_cast<int64_t>(header.entry_count * sizeof(FileEntry));
  for (uint64_t i = 0; i < header.entry_count; ++i) {
    FileEntry entry;
    std::memcpy(&entry, mapped_ + table + i * sizeof(FileEntry), sizeof(entry));
    const bool inside = entry.bytes >= 0 && entry.offset >= blobs &&
                        entry.offset % kAlignment == 0 &&
                        entry.offset <= mapped_bytes_ &&
                        entry.bytes <= mapped_bytes_ - entry.offset;
    if (!inside || entry.op < 0 || entry.ordinal < 0 ||
        !entries_
             .emplace(ArrayId{entry.op, entry.ordinal},
                      Entry{entry.bytes, entry.offset})
             .second) {
      *reason = "entry " + std::to_string(i) + " (op " +
                std::to_string(entry.op) + ", array " +
                std::to_string(entry.ordinal) +
                ") is out of the file's bounds or repeated";
      entries_.clear();
      return false;
    }
  }
  return true;
}

std::unique_ptr<PackedWeightSource> PackedWeightCache::SourceFor(int op_index) {
  return std::make_unique<OpSource>(this, op_index);
}

void *PackedWeightCache::Acquire(int op, int ordinal, int64_t bytes,
                                 bool *ready) {
  *ready = false;
  if (bytes < 0) return nullptr;
  auto found = entries_.find(ArrayId{op, ordinal});
  if (found != entries_.end() && found->second.bytes == bytes) {
    const void *data = mapped_ + found->second.offset;
    requests_.push_back(Request{op, ordinal, bytes, data});
    ++hits_;
    *ready = true;
    return const_cast<void *>(data);
  }
  void *data = packed_anew_.Allocate(bytes);
  if (data == nullptr) return nullptr;
  requests_.push_back(Request{op, ordinal, bytes, data});
  ++misses_;
  return data;
}

MaceStatus PackedWeightCache::Save() const {
  if (misses_ == 0) return MaceStatus::MACE_SUCCESS;
  FileHeader header;
  std::memcpy(header.magic, kMagic, sizeof(kMagic));
  header.byte_order = kByteOrderMark;
  header.key_bytes = static_cast<uint32_t>(key_.size());
  header.entry_count = requests_.size();
  std::vector<FileEntry> table;
  int64_t offset = AlignUp(sizeof(header) + key_.size() +
                           requests_.size() * sizeof(FileEntry));
  for (const Request &request : requests_) {
    table.push_back(
        FileEntry{request.op, request.ordinal, request.bytes, offset});
    offset = AlignUp(offset + request.bytes);
  }

  // Unique per process and per save: engines saving the same cache at
  // once each write their own file, and the last rename wins.
  static std::atomic<int> saves{0};
  const std::string temporary =
      path_ + ".tmp" + std::to_string(static_cast<long>(getpid())) + "." +
      std::to_string(saves.fetch_add(1));
  auto fail = [&](const char *what) {
    std::remove(temporary.c_str());
    return RuntimeError("packed weight cache '", path_, "': cannot ", what,
                        " '", temporary, "': ", std::strerror(errno));
  };
  std::unique_ptr<std::FILE, FileCloser> file(
      std::fopen(temporary.c_str(), "wb"));
  if (file == nullptr) return fail("create");
  static const char kZeros[kAlignment] = {};
  int64_t written = 0;
  auto write = [&](const void *data, int64_t bytes) {
    written += bytes;
    return bytes == 0 ||
           std::fwrite(data, static_cast<size_t>(bytes), 1, file.get()) == 1;
  };
  auto pad_to = [&](int64_t target) { return write(kZeros, target - written); };
  bool ok = write(&header, sizeof(header)) &&
            write(key_.data(), static_cast<int64_t>(key_.size())) &&
            write(table.data(),
                  static_cast<int64_t>(table.size() * sizeof(FileEntry)));
  for (size_t i = 0; ok && i < requests_.size(); ++i) {
    ok =
        pad_to(table[i].offset) && write(requests_[i].data, requests_[i].bytes);
  }
  if (!ok) return fail("write");
  if (std::fclose(file.release()) != 0) return fail("close");
  if (std::rename(temporary.c_str(), path_.c_str()) != 0) {
    return fail("rename over it");
  }
  return MaceStatus::MACE_SUCCESS;
}

}  // namespace mace
