// SpaceToBatchND and BatchToSpaceND on NHWC float32 data, TensorFlow
// semantics for the two spatial dims. Arg `block_shape` (ints [bh, bw],
// required, >= 1).
//
// SpaceToBatchND: arg `paddings` (ints [top, bottom, left, right], default
// 0, >= 0). The zero-padded input [N, Hp, Wp, C] (Hp divisible by bh, Wp by
// bw) becomes [N*bh*bw, Hp/bh, Wp/bw, C]; output batch (i*bw + j)*N + n,
// position (y, x) holds padded (n, y*bh + i, x*bw + j).
// BatchToSpaceND: arg `crops` (ints [top, bottom, left, right], default 0,
// >= 0). Input [B, H, W, C] with B divisible by bh*bw, N = B/(bh*bw), gives
// [N, H*bh - top - bottom, W*bw - left - right, C], the exact inverse.

#include <cstring>
#include <vector>

#include "mace/ops/common/move_util.h"
#include "mace/ops/op_registry.h"

namespace mace {
namespace {

// block_shape and the 4 paddings / crops (named `margins_arg`), checked.
MaceStatus ParseBlockArgs(const OpContext &context, const char *margins_arg,
                          std::vector<int64_t> *block,
                          std::vector<int64_t> *margins) {
  MACE_RETURN_IF_ERROR(context.ExpectInputCount(1, 1));
  MACE_RETURN_IF_ERROR(context.ExpectOutputCount(1));
  MACE_RETURN_IF_ERROR(CheckNhwc(context));
  MACE_RETURN_IF_ERROR(ExpectFloatOrInt32(context, 0, false));
  MACE_RETURN_IF_ERROR(context.ExpectRank(0, 4));
  std::vector<int> block32, margins32;
  MACE_RETURN_IF_ERROR(context.args().GetInts("block_shape", {}, &block32));
  MACE_RETURN_IF_ERROR(
      context.args().GetInts(margins_arg, {0, 0, 0, 0}, &margins32));
  if (block32.size() != 2) {
    return context.InvalidArgs(
        "argument 'block_shape' must have 2 values "
        "[bh, bw], has ",
        block32.size());
  }
  for (int b : block32) {
    if (b < 1 || b > 65536) {
      return context.InvalidArgs("argument 'block_shape' value ", b,
                                 " must be 1 to 65536");
    }
  }
  if (margins32.size() != 4) {
    return context.InvalidArgs("argument '", margins_arg,
                               "' must have 4 values [top, bottom, left, "
                               "right], has ",
                               margins32.size());
  }
  for (int m : margins32) {
    if (m < 0) {
      return context.InvalidArgs("argument '", margins_arg,
                                 "' has a negative value ", m);
    }
  }
  block->assign(block32.begin(), block32.end());
  margins->assign(margins32.begin(), margins32.end());
  return MaceStatus::MACE_SUCCESS;
}

class SpaceToBatchOp : public Operation {
 public:
  MaceStatus Prepare(OpContext *context) override {
    MACE_RETURN_IF_ERROR(ParseBlockArgs(*context, "paddings", &block_, &pads_));
    const Tensor &input = context->input(0);
    const int64_t padded_h = input.dim(1) + pads_[0] + pads_[1];
    const int64_t padded_w = input.dim(2) + pads_[2] + pads_[3];
    if (padded_h % block_[0] != 0 || padded_w % block_[1] != 0) {
      return context->InvalidArgs(
          "padded height ", padded_h, " and width ", padded_w,
          " must be divisible by block_shape ", ShapeToString(block_));
    }
    return SetOutput(
        context, DT_FLOAT,
        {input.dim(0) * block_[0] * block_[1], padded_h / block_[0],
         padded_w / block_[1], input.dim(3)});
  }

  MaceStatus Run(OpContext *context) override {
    const Tensor &input = context->input(0);
    Tensor *output = context->output(0);
    if (output->size() == 0) return MaceStatus::MACE_SUCCESS;
    const int64_t batch = input.dim(0), in_h = input.dim(1);
    const int64_t in_w = input.dim(2), channels = input.dim(3);
    const int64_t out_h = output->dim(1), out_w = output->dim(2);
    const float *x = input.data<float>();
    float *y = output->mutable_data<float>();
    const int64_t bh = block_[0], bw = block_[1];
    const int64_t top = pads_[0], left = pads_[2];
    const int64_t row_size = out_w * channels;
    // One output row (batch b, row oy) per step.
    context->thread_pool()->ParallelFor(
        0, output->dim(0) * out_h, std::max<int64_t>(1, 4096 / row_size),
        [&](int64_t begin, int64_t end) {
          for (int64_t r = begin; r < end; ++r) {
            const int64_t b = r / out_h, oy = r % out_h;
            const int64_t n = b % batch, shift = b / batch;
            const int64_t iy = oy * bh + shift / bw - top;
            const int64_t sx = shift % bw;
            float *dst = y + r * row_size;
            if (iy < 0 || iy >= in_h) {
              std::memset(dst, 0, row_size * sizeof(float));
              continue;
            }
            const float *src_row = x + (n * in_h + iy) * in_w * channels;
            for (int64_t ox = 0; ox < out_w; ++ox) {
              const int64_t ix = ox * bw + sx - left;
              float *d = dst + ox * channels;
              if (ix < 0 || ix >= in_w) {
                std::memset(d, 0, channels * sizeof(float));
              } else {
                std::memcpy(d, src_row + ix * channels,
                            channels * sizeof(float));
              }
            }
          }
        });
    return MaceStatus::MACE_SUCCESS;
  }

 private:
  std::vector<int64_t> block_, pads_;
};

class BatchToSpaceOp : public Operation {
 public:
  MaceStatus Prepare(OpContext *context) override {
    MACE_RETURN_IF_ERROR(ParseBlockArgs(*context, "crops", &block_, &crops_));
    const Tensor &input = context->input(0);
    const int64_t blocks = block_[0] * block_[1];
    if (input.dim(0) % blocks != 0) {
      return context->InvalidArgs("input batch ", input.dim(0),
                                  " must be divisible by block_shape "
                                  "product ",
                                  blocks);
    }
    const int64_t out_h = input.dim(1) * block_[0] - crops_[0] - crops_[1];
    const int64_t out_w = input.dim(2) * block_[1] - crops_[2] - crops_[3];
    if (out_h < 0 || out_w < 0) {
      return context->InvalidArgs(
          "argument 'crops' ", ShapeToString(crops_), " removes more than the ",
          input.dim(1) * block_[0], " x ", input.dim(2) * block_[1], " output");
    }
    return SetOutput(context, DT_FLOAT,
                     {input.dim(0) / blocks, out_h, out_w, input.dim(3)});
  }

  MaceStatus Run(OpContext *context) override {
    const Tensor &input = context->input(0);
    Tensor *output = context->output(0);
    if (output->size() == 0) return MaceStatus::MACE_SUCCESS;
    const int64_t in_h = input.dim(1), in_w = input.dim(2);
    const int64_t channels = input.dim(3);
    const int64_t batch = output->dim(0), out_h = output->dim(1);
    const int64_t out_w = output->dim(2);
    const float *x = input.data<float>();
    float *y = output->mutable_data<float>();
    const int64_t bh = block_[0], bw = block_[1];
    const int64_t top = crops_[0], left = crops_[2];
    const int64_t row_size = out_w * channels;
    context->thread_pool()->ParallelFor(
        0, batch * out_h, std::max<int64_t>(1, 4096 / row_size),
        [&](int64_t begin, int64_t end) {
          for (int64_t r = begin; r < end; ++r) {
            const int64_t n = r / out_h, oy = r % out_h;
            const int64_t fy = oy + top;  // row in the uncropped output
            const int64_t iy = fy / bh, sy = fy % bh;
            float *dst = y + r * row_size;
            for (int64_t ox = 0; ox < out_w; ++ox) {
              const int64_t fx = ox + left;
              const int64_t ib = (sy * bw + fx % bw) * batch + n;
              const float *src =
                  x + ((ib * in_h + iy) * in_w + fx / bw) * channels;
              std::memcpy(dst + ox * channels, src, channels * sizeof(float));
            }
          }
        });
    return MaceStatus::MACE_SUCCESS;
  }

 private:
  std::vector<int64_t> block_, crops_;
};

}  // namespace

void RegisterSpaceToBatch(OpRegistry *registry) {
  registry->Register<SpaceToBatchOp>("SpaceToBatchND");
  registry->Register<BatchToSpaceOp>("BatchToSpaceND");
}

}  // namespace mace
