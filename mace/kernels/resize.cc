// The resize driver: picks the row kernels of the ISA and shares the output
// rows (of every image) among the threads. Bilinear keeps the last two
// input rows interpolated along x for the next output row. An output row that
// reads the same input rows with the same weight as the row before it (nearest
// upsampling repeats every source row) is a copy of that row when the same
// task has just computed it.

#include "mace/kernels/resize.h"

#include <cstring>
#include <vector>

#include "mace/kernels/resize_impl.h"

namespace mace {
namespace kernels {
namespace {

bool SameSourceRow(ResizeKind kind, const ResizeAxis &rows, int64_t a,
                   int64_t b) {
  if (rows.lower[a] != rows.lower[b]) return false;
  return kind == ResizeKind::kNearest ||
         (rows.upper[a] == rows.upper[b] && rows.lerp[a] == rows.lerp[b]);
}

// The last two input rows interpolated along x, by their row index in the
// whole batch; one per task (bilinear only: nearest allocates nothing).
class ColumnLerpCache {
 public:
  ColumnLerpCache(const ResizeKernels &kernels, const ResizeAxis &cols,
                  const ResizeShape &shape, const float *x)
      : kernels_(kernels), cols_(cols), shape_(shape), x_(x) {}

  // The rows top_row and bottom_row interpolated along x.
  void Get(int64_t top_row, int64_t bottom_row, const float **top,
           const float **bottom) {
    int top_slot = Find(top_row);
    if (top_slot < 0) {
      top_slot = Find(bottom_row) == 0 ? 1 : 0;
      Fill(top_slot, top_row);
    }
    int bottom_slot = Find(bottom_row);
    if (bottom_slot < 0) {
      bottom_slot = 1 - top_slot;
      Fill(bottom_slot, bottom_row);
    }
    *top = Slot(top_slot);
    *bottom = Slot(bottom_slot);
  }

 private:
  int Find(int64_t row) const {
    for (int k = 0; k < 2; ++k) {
      if (rows_[k] == row) return k;
    }
    return -1;
  }

  float *Slot(int k) { return rows_data_.data() + k * RowSize(); }
  int64_t RowSize() const { return shape_.out_w * shape_.channels; }

  void Fill(int k, int64_t row) {
    if (rows_data_.empty()) rows_data_.resize(2 * RowSize());
    kernels_.lerp_columns(x_ + row * shape_.in_w * shape_.channels, cols_,
                          shape_.out_w, shape_.channels, Slot(k));
    rows_[k] = row;
  }

  const ResizeKernels &kernels_;
  const ResizeAxis &cols_;
  const ResizeShape &shape_;
  const float *x_;
  int64_t rows_[2] = {-1, -1};
  std::vector<float> rows_data_;
};

}  // namespace

void Resize(ResizeKind kind, const ResizeShape &shape, const ResizeAxis &rows,
            const ResizeAxis &cols, const float *x, float *y,
            ThreadPool *pool) {
  Resize(SelectedVectorIsa(), kind, shape, rows, cols, x, y, pool);
}

void Resize(VectorIsa isa, ResizeKind kind, const ResizeShape &s,
            const ResizeAxis &rows, const ResizeAxis &cols, const float *x,
            float *y, ThreadPool *pool) {
  const int64_t out_rows = s.batch * s.out_h;
  const int64_t row_size = s.out_w * s.channels;
  if (out_rows <= 0 || row_size <= 0) return;
  const ResizeKernels &kernels = KernelsFor<ResizeKernels>(isa);
  const int64_t in_row_size = s.in_w * s.channels;
  auto run = [&](int64_t begin, int64_t end) {
    ColumnLerpCache cache(kernels, cols, s, x);
    for (int64_t r = begin; r < end; ++r) {
      const int64_t n = r / s.out_h, oy = r % s.out_h;
      float *dst = y + r * row_size;
      if (r > begin && oy > 0 && SameSourceRow(kind, rows, oy, oy - 1)) {
        std::memcpy(dst, dst - row_size, row_size * sizeof(float));
        continue;
      }
      const int64_t image_row = n * s.in_h;
      if (kind == ResizeKind::kNearest) {
        kernels.nearest_row(x + (image_row + rows.lower[oy]) * in_row_size,
                            cols.lower, s.out_w, s.channels, dst);
      } else {
        const float *top = nullptr, *bottom = nullptr;
        cache.Get(image_row + rows.lower[oy], image_row + rows.upper[oy], &top,
                  &bottom);
        kernels.lerp_rows(top, bottom, rows.lerp[oy], row_size, dst);
      }
    }
  };
  ParallelForOrInline(pool, 0, out_rows, MaxIndex(1, 4096 / row_size), run);
}

}  // namespace kernels
}  // namespace mace
