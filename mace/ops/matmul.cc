// MatMul with numpy semantics: C = op(A) x op(B), op = transpose of the last
// two dims when `transpose_a` / `transpose_b` is set. A 1-D A is a row
// [1, K] and a 1-D B a column [K, 1] (transpose flags ignored for them); the
// added dim is removed from the output. Leading (batch) dims broadcast.
// An optional third input, a 1-D bias of N values (B of rank >= 2), is
// added to every row of C: the converter folds x @ W + b into it.

#include <algorithm>
#include <utility>
#include <vector>

#include "mace/kernels/sgemm.h"
#include "mace/ops/common/dense_util.h"
#include "mace/ops/op_registry.h"

namespace mace {
namespace {

// One operand seen as a stack of logical (already transposed) matrices:
// element (r, c) of a matrix is at its start + r * row_step + c * col_step.
struct MatrixView {
  Shape batch;  // the leading dims
  int64_t rows = 0;
  int64_t cols = 0;
  int64_t row_step = 0;
  int64_t col_step = 0;
  int64_t matrix_size = 0;  // elements per stored matrix
};

MatrixView ViewOperand(const Tensor &t, bool transpose, bool is_lhs) {
  MatrixView view;
  if (t.rank() == 1) {
    const int64_t len = t.dim(0);
    view.rows = is_lhs ? 1 : len;
    view.cols = is_lhs ? len : 1;
    view.row_step = is_lhs ? len : 1;
    view.col_step = 1;
    view.matrix_size = len;
    return view;
  }
  view.batch.assign(t.shape().begin(), t.shape().end() - 2);
  const int64_t stored_rows = t.dim(-2);
  const int64_t stored_cols = t.dim(-1);
  view.matrix_size = stored_rows * stored_cols;
  view.rows = transpose ? stored_cols : stored_rows;
  view.cols = transpose ? stored_rows : stored_cols;
  view.row_step = transpose ? 1 : stored_cols;
  view.col_step = transpose ? stored_cols : 1;
  return view;
}

// Element strides of `view`'s batch dims, right-aligned to `out_rank` dims;
// 0 where the operand is broadcast (dim 1 or absent).
std::vector<int64_t> BatchStrides(const MatrixView &view, int out_rank) {
  std::vector<int64_t> strides(out_rank, 0);
  int64_t stride = view.matrix_size;
  const int offset = out_rank - static_cast<int>(view.batch.size());
  for (int i = static_cast<int>(view.batch.size()) - 1; i >= 0; --i) {
    if (view.batch[i] != 1) strides[i + offset] = stride;
    stride *= view.batch[i];
  }
  return strides;
}

class MatMulOp : public Operation {
 public:
  MaceStatus Prepare(OpContext *context) override {
    MACE_RETURN_IF_ERROR(context->ExpectInputCount(2, 3));
    MACE_RETURN_IF_ERROR(context->ExpectOutputCount(1));
    MACE_RETURN_IF_ERROR(RejectNchw(*context));
    MACE_RETURN_IF_ERROR(ExpectFloatInputs(*context));
    MACE_RETURN_IF_ERROR(ExpectMinRank(*context, 0, 1));
    MACE_RETURN_IF_ERROR(ExpectMinRank(*context, 1, 1));
    bool transpose_a = false;
    bool transpose_b = false;
    MACE_RETURN_IF_ERROR(
        context->args().GetBool("transpose_a", false, &transpose_a));
    MACE_RETURN_IF_ERROR(
        context->args().GetBool("transpose_b", false, &transpose_b));

    const Tensor &a = context->input(0);
    const Tensor &b = context->input(1);
    a_ = ViewOperand(a, transpose_a, true);
    b_ = ViewOperand(b, transpose_b, false);
    if (a_.cols != b_.rows) {
      return context->InvalidArgs(
          "inner dims differ: A '", a.name(), "' ", ShapeToString(a.shape()),
          " (transpose_a=", transpose_a, ") gives K = ", a_.cols, ", B '",
          b.name(), "' ", ShapeToString(b.shape()),
          " (transpose_b=", transpose_b, ") gives K = ", b_.rows);
    }
    MACE_RETURN_IF_ERROR(CheckBias(*context));
    Shape out_batch;
    MACE_RETURN_IF_ERROR(BroadcastBatch(*context, &out_batch));

    Shape out_shape = out_batch;
    if (a.rank() > 1) out_shape.push_back(a_.rows);
    if (b.rank() > 1) out_shape.push_back(b_.cols);
    if (ShapeElementCount(out_shape) < 0) {
      return context->InvalidArgs("output shape ", ShapeToString(out_shape),
                                  " is too large");
    }
    const bool empty_output = ShapeElementCount(out_shape) == 0;
    num_batches_ = empty_output ? 0 : ShapeElementCount(out_batch);
    const int batch_rank = static_cast<int>(out_batch.size());
    a_strides_ = BatchStrides(a_, batch_rank);
    b_strides_ = BatchStrides(b_, batch_rank);
    out_batch_ = std::move(out_batch);
    Tensor *output = context->output(0);
    output->set_dtype(DT_FLOAT);
    output->set_shape(out_shape);
    return PackConstantB(context);
  }

  MaceStatus Run(OpContext *context) override {
    const float *a = context->input(0).data<float>();
    const float *b = context->input(1).data<float>();
    float *c = context->output(0)->mutable_data<float>();
    const float *bias =
        context->num_inputs() > 2 ? context->input(2).data<float>() : nullptr;
    const int64_t m_size = a_.rows;
    const int64_t n_size = b_.cols;
    const int64_t k_size = a_.cols;
    if (!packed_b_.empty()) {
      // Each batch's rows of A (contiguous, rows a_.row_step apart) by the
      // packed B; each value sums over k in order, as below.
      for (int64_t batch = 0; batch < num_batches_; ++batch) {
        kernels::Sgemm(m_size, n_size, k_size, a + Offsets(batch).a,
                       a_.row_step, packed_b_, bias,
                       c + batch * m_size * n_size, n_size,
                       context->thread_pool());
      }
      return MaceStatus::MACE_SUCCESS;
    }
    if (pack_b_at_run_) {
      // B changes with every run (attention's Q x K^T, P x V): each batch's
      // B packed into scratch, then the same SGEMM; a B shared by
      // consecutive batches is packed once.
      kernels::PackedMatrixB packed;
      kernels::PlacePackedB(k_size, n_size, kernels::SelectedSgemmIsa(),
                            context->scratch<float>(), &packed);
      const bool n_by_k = b_.row_step == 1;
      int64_t packed_offset = -1;
      for (int64_t batch = 0; batch < num_batches_; ++batch) {
        const BatchOffsets offsets = Offsets(batch);
        if (offsets.b != packed_offset) {
          kernels::PackBInto(b + offsets.b, n_by_k, &packed,
                             context->thread_pool());
          packed_offset = offsets.b;
        }
        kernels::Sgemm(m_size, n_size, k_size, a + offsets.a, a_.row_step,
                       packed, bias, c + batch * m_size * n_size, n_size,
                       context->thread_pool());
      }
      return MaceStatus::MACE_SUCCESS;
    }
    const MatrixView &av = a_;
    const MatrixView &bv = b_;
    const int64_t num_rows = num_batches_ * m_size;
    const int64_t grain = GrainFor(n_size * k_size);
    // One task per output row; each row accumulates over k in order, so the
    // result does not depend on the thread count.
    context->thread_pool()->ParallelFor(
        0, num_rows, grain, [&](int64_t begin, int64_t end) {
          for (int64_t row = begin; row < end; ++row) {
            const BatchOffsets offsets = Offsets(row / m_size);
            const int64_t m = row % m_size;
            const float *a_row = a + offsets.a + m * av.row_step;
            float *c_row = c + row * n_size;
            std::fill(c_row, c_row + n_size, 0.0f);
            for (int64_t k = 0; k < k_size; ++k) {
              const float a_mk = a_row[k * av.col_step];
              const float *b_row = b + offsets.b + k * bv.row_step;
              for (int64_t n = 0; n < n_size; ++n) {
                c_row[n] += a_mk * b_row[n * bv.col_step];
              }
            }
            if (bias != nullptr) {
              for (int64_t n = 0; n < n_size; ++n) c_row[n] += bias[n];
            }
          }
        });
    return MaceStatus::MACE_SUCCESS;
  }

  int64_t MacCount(const OpContext &context) const override {
    return num_batches_ * a_.rows * b_.cols * a_.cols;
  }

 private:
  // The optional bias (float, as every input): one value per column of C,
  // which has columns only with B of rank >= 2.
  MaceStatus CheckBias(const OpContext &context) const {
    if (context.num_inputs() < 3) return MaceStatus::MACE_SUCCESS;
    const Tensor &b = context.input(1);
    if (b.rank() < 2) {
      return context.InvalidArgs("bias '", context.input(2).name(),
                                 "' needs B of rank >= 2 (C has ",
                                 "no columns with a 1-D B); B '", b.name(),
                                 "' is ", ShapeToString(b.shape()));
    }
    return ExpectVector(context, 2, "bias", b_.cols);
  }

  // A constant B shared by every batch (x @ W of a transformer's
  // projections, on [batch, seq, d] activations that MatMulToFullyConnected
  // leaves alone) is packed once for the SGEMM; A must have contiguous rows.
  // Any other B with rank >= 2, under an A with contiguous rows, is packed
  // at Run into scratch (pack_b_at_run_).
  MaceStatus PackConstantB(OpContext *context) {
    packed_b_ = kernels::PackedMatrixB();
    pack_b_at_run_ = false;
    const Tensor &b = context->input(1);
    if (!context->will_run() || a_.col_step != 1 || b.rank() < 2 ||
        num_batches_ == 0) {
      return MaceStatus::MACE_SUCCESS;
    }
    const bool b_shared = std::all_of(b_strides_.begin(), b_strides_.end(),
                                      [](int64_t s) { return s == 0; });
    if (!b.is_constant() || !b.has_data() || !b_shared) {
      pack_b_at_run_ = true;
      context->RequestScratch(
          kernels::PackedBSize(b_.rows, b_.cols, kernels::SelectedSgemmIsa()) *
          static_cast<int64_t>(sizeof(float)));
      return MaceStatus::MACE_SUCCESS;
    }
    // Stored k x n (row_step n) or, transposed, n x k.
    const bool n_by_k = b_.row_step == 1;
    if (!kernels::PackB(b.data<float>(), b_.rows, b_.cols, n_by_k,
                        kernels::SelectedSgemmIsa(), context->packed_weights(),
                        &packed_b_, context->thread_pool())) {
      return context->OutOfResources("cannot allocate the packed copy of ",
                                     "B '", b.name(), "'");
    }
    return MaceStatus::MACE_SUCCESS;
  }

  // Numpy broadcasting of the leading dims: right-aligned, each pair equal
  // or one of them 1.
  MaceStatus BroadcastBatch(const OpContext &context, Shape *out) const {
    const size_t rank = std::max(a_.batch.size(), b_.batch.size());
    out->assign(rank, 1);
    for (size_t i = 0; i < rank; ++i) {
      const int64_t da =
          i < a_.batch.size() ? a_.batch[a_.batch.size() - 1 - i] : 1;
      const int64_t db =
          i < b_.batch.size() ? b_.batch[b_.batch.size() - 1 - i] : 1;
      if (da != db && da != 1 && db != 1) {
        return context.InvalidArgs("batch dims of A ", ShapeToString(a_.batch),
                                   " and B ", ShapeToString(b_.batch),
                                   " cannot be broadcast together (", da,
                                   " vs ", db, ")");
      }
      (*out)[rank - 1 - i] = da == 1 ? db : da;
    }
    return MaceStatus::MACE_SUCCESS;
  }

  // Start of A's and B's matrix for output batch `batch`, decoded from the
  // batch strides when needed: a table of them cost Prepare time and
  // memory in proportion to the batch count, which a model may make huge.
  struct BatchOffsets {
    int64_t a = 0;
    int64_t b = 0;
  };
  BatchOffsets Offsets(int64_t batch) const {
    BatchOffsets offsets;
    for (int i = static_cast<int>(out_batch_.size()) - 1; i >= 0; --i) {
      const int64_t index = batch % out_batch_[i];
      batch /= out_batch_[i];
      offsets.a += index * a_strides_[i];
      offsets.b += index * b_strides_[i];
    }
    return offsets;
  }

  MatrixView a_;
  MatrixView b_;
  // No batches when the output is empty: then Run has nothing to do, and
  // the batch dims may multiply to anything.
  int64_t num_batches_ = 0;
  Shape out_batch_;
  std::vector<int64_t> a_strides_;  // BatchStrides, right-aligned to
  std::vector<int64_t> b_strides_;  // out_batch_
  kernels::PackedMatrixB packed_b_;  // empty: packed at Run, or the loops
  bool pack_b_at_run_ = false;
};

}  // namespace

void RegisterMatMul(OpRegistry *registry) {
  registry->Register<MatMulOp>("MatMul");
}

}  // namespace mace
