// ChannelShuffle (ShuffleNet): splits the C channels (last axis) into
// `group` groups of C / group and interleaves them: input channel
// g * (C / group) + k goes to output channel k * group + g. Arg `group`
// (int, required, >= 1, divides C). Any rank >= 1 (NHWC: channels last);
// float32. Output shape = input shape.

#include <algorithm>
#include <vector>

#include "mace/ops/common/move_util.h"
#include "mace/ops/op_registry.h"

namespace mace {
namespace {

class ChannelShuffleOp : public Operation {
 public:
  MaceStatus Prepare(OpContext *context) override {
    MACE_RETURN_IF_ERROR(context->ExpectInputCount(1, 1));
    MACE_RETURN_IF_ERROR(context->ExpectOutputCount(1));
    MACE_RETURN_IF_ERROR(CheckNhwc(*context));
    MACE_RETURN_IF_ERROR(ExpectFloatOrInt32(*context, 0, false));
    const Tensor &input = context->input(0);
    if (input.rank() < 1) {
      return context->InvalidArgs("input '", input.name(),
                                  "' must have a channel axis, is a scalar");
    }
    if (!context->args().Has("group")) {
      return context->InvalidArgs("argument 'group' is required");
    }
    int64_t group = 0;
    MACE_RETURN_IF_ERROR(context->args().GetInt("group", int64_t{0}, &group));
    const int64_t channels = input.dim(-1);
    if (group < 1 || channels % group != 0) {
      return context->InvalidArgs("argument 'group' = ", group,
                                  " must be positive and divide the ", channels,
                                  " channels");
    }
    // The output's channel axis seen as [C / group, group]: stepping k moves
    // one input channel, stepping g moves a whole input group.
    const std::vector<int64_t> strides = RowMajorStrides(input.shape());
    view_.dims.assign(input.shape().begin(), input.shape().end() - 1);
    view_.steps.assign(strides.begin(), strides.end() - 1);
    view_.dims.push_back(channels / group);
    view_.steps.push_back(1);
    view_.dims.push_back(group);
    view_.steps.push_back(channels / group);
    view_.base = 0;
    group_ = group;
    channels_ = channels;
    return SetOutput(context, input.dtype(), input.shape());
  }

  MaceStatus Run(OpContext *context) override {
    if (group_ != 2) {
      StridedCopyOp(view_, context);
      return MaceStatus::MACE_SUCCESS;
    }
    const std::vector<OpContext::OutputSlice> &slices =
        context->output_slices();
    if (slices.empty()) {
      const OpContext::OutputSlice whole{0, channels_, context->output(0),
                                         channels_};
      ShuffleTwoGroups(context, &whole, 1);
    } else {
      ShuffleTwoGroups(context, slices.data(), slices.size());
    }
    return MaceStatus::MACE_SUCCESS;
  }

  // Two groups: Net may have this op write its output's channel ranges
  // straight into the Slices that read them.
  bool WritesOutputSlices() const override { return group_ == 2; }

 private:
  // ShuffleNet's two groups: each pixel's two halves interleaved, pixel by
  // pixel (the general strided copy works in blocks of 16 channels, a
  // division per block: 12% of ShuffleNetV2's run), its shuffled channels
  // [begin, end) going to each of `targets`.
  void ShuffleTwoGroups(OpContext *context,
                        const OpContext::OutputSlice *targets,
                        size_t count) const {
    const float *x = context->input(0).data<float>();
    const int64_t channels = channels_;
    const int64_t pixels = context->input(0).size() / channels;
    context->thread_pool()->ParallelFor(
        0, pixels, std::max<int64_t>(1, 4096 / channels),
        [&](int64_t begin, int64_t end) {
          for (int64_t p = begin; p < end; ++p) {
            for (size_t t = 0; t < count; ++t) {
              const OpContext::OutputSlice &target = targets[t];
              float *out =
                  target.tensor->mutable_data<float>() + p * target.row_stride;
              ShuffleColumns(x + p * channels, channels / 2, target.begin,
                             target.end, out);
            }
          }
        });
  }

  // Channels [begin, end) of one pixel shuffled in two groups: channel c is
  // channel c / 2 of the low half (c even) or of the high half (c odd).
  static void ShuffleColumns(const float *low, int64_t half, int64_t begin,
                             int64_t end, float *out) {
    const float *high = low + half;
    int64_t c = begin;
    if (c < end && c % 2 == 1) *out++ = high[c++ / 2];
    const int64_t first = c / 2;
    const int64_t pairs = (end - c) / 2;
    for (int64_t k = 0; k < pairs; ++k) {
      out[2 * k] = low[first + k];
      out[2 * k + 1] = high[first + k];
    }
    if ((end - c) % 2 == 1) out[2 * pairs] = low[first + pairs];
  }

  StridedView view_;
  int64_t group_ = 1;
  int64_t channels_ = 1;
};

}  // namespace

void RegisterChannelShuffle(OpRegistry *registry) {
  registry->Register<ChannelShuffleOp>("ChannelShuffle");
}

}  // namespace mace
