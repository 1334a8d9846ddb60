// Benchmarks of Transpose on feature maps: the layout changes a converted
// model does at its borders (NCHW -> NHWC for an input of 32 channels,
// NHWC -> NCHW for an output), a 3-channel image, and a 3-D [B, S, D] ->
// [B, D, S] as attention models have it. Names follow MACE's:
// MACE_BM_TRANSPOSE_<shape>_PERM_<perm>_float_CPU. GMACPS counts elements
// moved.
//
// Environment: MACE_BM_THREADS as bench_util.h says.

#include <string>
#include <vector>

#include "benchmarks/ops/bench_util.h"

namespace mace {
namespace bench {
namespace {

void RegisterTranspose(const std::vector<int64_t> &shape,
                       const std::vector<int64_t> &perm) {
  const std::string name = "MACE_BM_TRANSPOSE_" + JoinDims(shape) + "_PERM_" +
                           JoinDims(perm) + "_float_CPU";
  std::vector<int64_t> out_shape;
  for (int64_t p : perm) out_shape.push_back(shape[p]);
  RegisterOneOp(
      name, "Transpose", shape, out_shape,
      [perm](OperatorDef *op) { ModelBuilder::AddIntsArg(op, "dims", perm); },
      Count(shape));
}

const bool kRegistered = [] {
  RegisterTranspose({1, 32, 112, 112}, {0, 2, 3, 1});
  RegisterTranspose({1, 112, 112, 64}, {0, 3, 1, 2});
  RegisterTranspose({1, 14, 14, 512}, {0, 3, 1, 2});
  RegisterTranspose({1, 3, 224, 224}, {0, 2, 3, 1});
  RegisterTranspose({1, 128, 768}, {0, 2, 1});
  return true;
}();

}  // namespace
}  // namespace bench
}  // namespace mace
