#include "mace/core/packed_weight_arena.h"

#include <algorithm>
#include <functional>
#include <utility>

#include "mace/core/int_math.h"

namespace mace {
namespace {

constexpr int64_t kAlignment = AlignedBuffer::kAlignment;
constexpr int64_t kHugePageBytes = int64_t{2} << 20;
constexpr int64_t kMinChunkBytes = int64_t{64} << 10;
// A chunk's unused tail costs nothing until touched, but at most this much
// address space is reserved ahead.
constexpr int64_t kMaxChunkBytes = int64_t{64} << 20;

// Packing can take more than the weights (Winograd's transformed filters
// 1.8-4x): a quarter more keeps a model that packs little in one chunk.
int64_t ChunkBytes(int64_t expected_bytes) {
  const int64_t wanted = std::clamp(expected_bytes + expected_bytes / 4,
                                    kMinChunkBytes, kMaxChunkBytes);
  // Whole huge pages once large enough for them (a partial one at the end
  // would be 4 KiB pages).
  return wanted >= kHugePageBytes ? RoundUp(wanted, kHugePageBytes)
                                  : RoundUp(wanted, kAlignment);
}

}  // namespace

class PackedWeightArena::OpSource : public PackedWeightSource {
 public:
  explicit OpSource(PackedWeightArena *arena) : arena_(arena) {}
  void *Acquire(int64_t bytes, bool *ready) override {
    *ready = false;
    return arena_->Allocate(bytes);
  }

 private:
  PackedWeightArena *arena_;
};

PackedWeightArena::PackedWeightArena(int64_t expected_bytes)
    : chunk_bytes_(ChunkBytes(std::max<int64_t>(expected_bytes, 0))) {}

void *PackedWeightArena::Allocate(int64_t bytes) {
  if (bytes < 0) return nullptr;
  const int64_t rounded = RoundUp(std::max<int64_t>(bytes, 1), kAlignment);
  if (chunks_.empty() ||
      used_in_last_ + rounded > static_cast<int64_t>(chunks_.back().size())) {
    AlignedBuffer chunk;
    const int64_t chunk_bytes = std::max(rounded, chunk_bytes_);
    if (!chunk.Allocate(static_cast<size_t>(chunk_bytes))) return nullptr;
    reserved_bytes_ += chunk_bytes;
    const bool fits_a_chunk = rounded <= chunk_bytes_;
    if (fits_a_chunk || chunks_.empty()) {
      chunks_.push_back(std::move(chunk));
      used_in_last_ = 0;
    } else {
      // An array larger than a chunk gets one of its own, placed before
      // the chunk being cut so that the latter's free tail stays in use.
      chunks_.insert(chunks_.end() - 1, std::move(chunk));
      allocated_bytes_ += bytes;
      FollowSlowHugePages();
      AddPendingPage(chunks_.size() - 2, 0);
      return chunks_[chunks_.size() - 2].data();
    }
  }
  FollowSlowHugePages();
  AddPendingPage(chunks_.size() - 1, used_in_last_);
  void *data =
      static_cast<unsigned char *>(chunks_.back().data()) + used_in_last_;
  used_in_last_ += rounded;
  allocated_bytes_ += bytes;
  return data;
}

bool PackedWeightArena::PendingPage::operator<(
    const PendingPage &other) const {
  return std::less<const void *>()(chunk_data, other.chunk_data) ||
         (chunk_data == other.chunk_data && page < other.page);
}

bool PackedWeightArena::PendingPage::operator==(
    const PendingPage &other) const {
  return chunk_data == other.chunk_data && page == other.page;
}

void PackedWeightArena::AddPendingPage(size_t chunk, int64_t offset) {
  if (small_pages_) return;
  pending_pages_.push_back(
      PendingPage{chunks_[chunk].data(), offset / kHugePageBytes});
}

void PackedWeightArena::FollowSlowHugePages() {
  // Found slow here or anywhere else in the process since the last look.
  if (!small_pages_ && AlignedBuffer::HugePagesFoundSlow()) {
    for (AlignedBuffer &each : chunks_) each.AdviseSmallPages();
    small_pages_ = true;
    pending_pages_.clear();
  }
}

void PackedWeightArena::MapHandedOut(ThreadPool *pool) {
  // Two threads faulting the same huge page would wait for each other and
  // take the page for slow: each page once.
  std::sort(pending_pages_.begin(), pending_pages_.end());
  pending_pages_.erase(
      std::unique(pending_pages_.begin(), pending_pages_.end()),
      pending_pages_.end());
  std::vector<std::pair<AlignedBuffer *, size_t>> pages;
  pages.reserve(pending_pages_.size());
  for (const PendingPage &pending : pending_pages_) {
    for (AlignedBuffer &chunk : chunks_) {
      if (chunk.data() == pending.chunk_data) {
        pages.emplace_back(&chunk,
                           static_cast<size_t>(pending.page * kHugePageBytes));
        break;
      }
    }
  }
  pending_pages_.clear();
  // AlignedBuffer::ProbeHugePage maps nothing once pages are found slow,
  // so the threads stop probing as soon as one of them finds that.
  auto probe = [&pages](int64_t begin, int64_t end) {
    for (int64_t i = begin; i < end; ++i) {
      pages[i].first->ProbeHugePage(pages[i].second);
    }
  };
  const int64_t count = static_cast<int64_t>(pages.size());
  ParallelForOrInline(pool, 0, count, 1, probe);
  FollowSlowHugePages();
}

std::unique_ptr<PackedWeightSource> PackedWeightArena::SourceFor(
    int /*op_index*/) {
  return std::make_unique<OpSource>(this);
}

}  // namespace mace
