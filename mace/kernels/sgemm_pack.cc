// Packing of the SGEMM's B matrix (the weights) into the column panels the
// micro-kernels read: see PackedMatrixB in sgemm.h.

#include <algorithm>
#include <cstring>
#include <utility>

#include "mace/kernels/interleave.h"
#include "mace/kernels/sgemm.h"

namespace mace {
namespace kernels {
namespace {

// Panel columns [0, cols) from k-by-n storage: each panel row is one run.
void PackPanelRows(const float *b, int64_t k, int64_t n, int64_t cols,
                   int64_t nr, float *panel) {
  for (int64_t row = 0; row < k; ++row) {
    std::memcpy(panel + row * nr, b + row * n, cols * sizeof(float));
  }
}

// Zeroes columns [cols, nr) of the k rows of `panel`.
void ZeroPanelColumns(int64_t k, int64_t cols, int64_t nr, float *panel) {
  for (int64_t row = 0; row < k; ++row) {
    std::fill(panel + row * nr + cols, panel + (row + 1) * nr, 0.0f);
  }
}

// Lays `packed` over `values` without writing them.
void LayPackedB(int64_t k, int64_t n, SgemmIsa isa, float *values,
                PackedMatrixB *packed) {
  const SgemmIsa used = SgemmIsaAvailable(isa) ? isa : SgemmIsa::kGeneric;
  packed->k = k;
  packed->n = n;
  packed->nr = SgemmPanelWidth(used);
  packed->isa = used;
  packed->storage.Release();
  packed->values = packed->size() > 0 ? values : nullptr;
}

// Panels [begin, end) of `packed` from `b`.
void PackPanels(const float *b, bool b_is_n_by_k, PackedMatrixB *packed,
                int64_t begin, int64_t end) {
  const int64_t k = packed->k;
  const int64_t n = packed->n;
  const int64_t nr = packed->nr;
  for (int64_t p = begin; p < end; ++p) {
    const int64_t col0 = p * nr;
    const int64_t cols = std::min(nr, n - col0);
    float *panel = packed->values + packed->Offset(0, col0);
    if (b_is_n_by_k) {
      TransposeRows(b + col0 * k, k, k, cols, panel, nr);
    } else {
      PackPanelRows(b + col0, k, n, cols, nr, panel);
    }
    if (cols < nr) ZeroPanelColumns(k, cols, nr, panel);
  }
}

int64_t PanelCount(const PackedMatrixB &packed) {
  return (packed.n + packed.nr - 1) / packed.nr;
}

}  // namespace

int64_t PackedBSize(int64_t k, int64_t n, SgemmIsa isa) {
  const int64_t nr =
      SgemmPanelWidth(SgemmIsaAvailable(isa) ? isa : SgemmIsa::kGeneric);
  return (n + nr - 1) / nr * k * nr;
}

void PlacePackedB(int64_t k, int64_t n, SgemmIsa isa, float *values,
                  PackedMatrixB *packed) {
  LayPackedB(k, n, isa, values, packed);
}

void ZeroPadColumns(PackedMatrixB *packed) {
  if (packed->empty()) return;
  const int64_t nr = packed->nr;
  const int64_t panels = PanelCount(*packed);
  const int64_t last_cols = packed->n - (panels - 1) * nr;
  if (last_cols < nr) {
    ZeroPanelColumns(packed->k, last_cols, nr,
                     packed->values + (panels - 1) * packed->k * nr);
  }
}

void ScalePackedBRows(const PackedMatrixB &b, const float *row_scale,
                      int64_t period, float *values, PackedMatrixB *scaled) {
  LayPackedB(b.k, b.n, b.isa, values, scaled);
  const int64_t nr = b.nr;
  const int64_t panels = PanelCount(b);
  for (int64_t p = 0; p < panels; ++p) {
    const float *src = b.values + p * b.k * nr;
    float *dst = values + p * b.k * nr;
    const int64_t cols = std::min(nr, b.n - p * nr);
    for (int64_t row = 0; row < b.k; ++row) {
      const float factor = row_scale[row % period];
      for (int64_t col = 0; col < cols; ++col) {
        dst[row * nr + col] = src[row * nr + col] * factor;
      }
    }
    // Pad columns stay zero whatever the scale (an infinite one included).
    if (cols < nr) ZeroPanelColumns(b.k, cols, nr, dst);
  }
}

bool AllocatePackedB(int64_t k, int64_t n, SgemmIsa isa,
                     PackedMatrixB *packed) {
  AlignedArray<float> storage;
  if (!storage.Allocate(static_cast<size_t>(PackedBSize(k, n, isa)))) {
    *packed = PackedMatrixB();
    return false;
  }
  PlacePackedB(k, n, isa, storage.data(), packed);
  packed->storage = std::move(storage);
  return true;
}

bool AcquirePackedBs(int64_t count, int64_t k, int64_t n, SgemmIsa isa,
                     PackedWeightSource *source, AlignedArray<float> *storage,
                     std::vector<PackedMatrixB> *packed, bool *ready) {
  packed->clear();
  const int64_t each = PackedBSize(k, n, isa);
  float *values = AcquirePackedFloats(source, count * each, storage, ready);
  if (values == nullptr) return false;
  packed->resize(count);
  for (int64_t i = 0; i < count; ++i) {
    // Matrices handed back packed have their pad columns zeroed already.
    if (*ready) {
      LayPackedB(k, n, isa, values + i * each, &(*packed)[i]);
    } else {
      PlacePackedB(k, n, isa, values + i * each, &(*packed)[i]);
    }
  }
  return true;
}

bool AcquirePackedB(int64_t k, int64_t n, SgemmIsa isa,
                    PackedWeightSource *source, PackedMatrixB *packed,
                    bool *ready) {
  AlignedArray<float> storage;
  std::vector<PackedMatrixB> matrices;
  if (!AcquirePackedBs(1, k, n, isa, source, &storage, &matrices, ready)) {
    *packed = PackedMatrixB();
    return false;
  }
  *packed = std::move(matrices[0]);
  packed->storage = std::move(storage);  // empty when from `source`
  return true;
}

bool PackB(const float *b, int64_t k, int64_t n, bool b_is_n_by_k, SgemmIsa isa,
           PackedWeightSource *source, PackedMatrixB *packed,
           ThreadPool *pool) {
  bool ready = false;
  if (!AcquirePackedB(k, n, isa, source, packed, &ready)) return false;
  if (!ready) PackBInto(b, b_is_n_by_k, packed, pool);
  return true;
}

void PackBInto(const float *b, bool b_is_n_by_k, PackedMatrixB *packed,
               ThreadPool *pool) {
  if (packed->empty()) return;
  auto pack_panels = [&](int64_t begin, int64_t end) {
    PackPanels(b, b_is_n_by_k, packed, begin, end);
  };
  const int64_t panels = PanelCount(*packed);
  // A panel of a few KiB is not worth a hand-off.
  const int64_t grain = std::max<int64_t>(
      1, 16384 / std::max<int64_t>(packed->k * packed->nr, 1));
  ParallelForOrInline(pool, 0, panels, grain, pack_panels);
}

int64_t DeferredPiecePanels(int64_t panel_floats) {
  constexpr int64_t kPieceFloats = 65536;  // 256 KiB
  return std::max<int64_t>(1,
                           kPieceFloats / std::max<int64_t>(panel_floats, 1));
}

void DeferPackBInto(const float *b, bool b_is_n_by_k, PackedMatrixB *packed,
                    DeferredWork *work) {
  if (packed->empty()) return;
  DeferPanelPieces(PanelCount(*packed), packed->k * packed->nr, work,
                   [b, b_is_n_by_k, packed](int64_t begin, int64_t end) {
                     PackPanels(b, b_is_n_by_k, packed, begin, end);
                   });
}

bool PackB(const float *b, int64_t k, int64_t n, bool b_is_n_by_k, SgemmIsa isa,
           PackedMatrixB *packed, ThreadPool *pool) {
  return PackB(b, k, n, b_is_n_by_k, isa, nullptr, packed, pool);
}

bool PackB(const float *b, int64_t k, int64_t n, bool b_is_n_by_k,
           PackedMatrixB *packed) {
  return PackB(b, k, n, b_is_n_by_k, SelectedSgemmIsa(), packed);
}

}  // namespace kernels
}  // namespace mace
