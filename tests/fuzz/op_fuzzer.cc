// Coverage-guided fuzzer (libFuzzer) of the ops' argument and shape
// checking: each input builds a model of one to three ops of any
// registered type, with fuzzer-chosen graph input shape and type, constant
// tensors (float, int32 or quantized uint8, with values that include NaN
// and extreme integers; float weights stored as fp32, fp16 or bf16),
// op inputs drawn from those tensors and earlier outputs, and arguments
// drawn from the names the ops read; the engine loads it and, when the
// load succeeds, runs it once. A load or run must succeed or fail with a
// message; a crash, a hang or a sanitizer report is a bug.
//
// Built by scripts/fuzz_ops.sh (clang, -DMACE_FUZZERS=ON, ASan + UBSan);
// not part of CTest. MACE_FUZZ_DUMP=1 prints the model an input builds,
// for replaying an artifact: `build-fuzz/op_fuzzer ARTIFACT`.

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "mace/model/model_builder.h"
#include "mace/ops/op_registry.h"
#include "mace/public/mace.h"
#include "tests/fuzz/fuzz_util.h"

namespace mace {
namespace fuzz {
namespace {

// Argument names the ops read (mace/ops/*.cc) and strings they compare.
const char *const kArgNames[] = {
    "T", "activation", "affine", "align_corners", "allowzero", "alpha",
    "argmin", "aspect_ratio", "axes", "axis", "background_label_id",
    "base_size", "begin", "begin_mask", "beta", "block_shape", "block_size",
    "ceil", "clip", "code_type", "coeff", "confidence_threshold",
    "constant_value", "coordinate_transformation_mode", "count_include_pad",
    "crops", "data_format", "depth_radius", "dilations", "dims",
    "ellipsis_mask", "end", "end_mask", "ends", "epsilon", "eta",
    "feat_stride", "flip", "fused_add", "global_pooling", "group",
    "group_size", "half_pixel", "half_pixel_centers", "height_scale",
    "img_h", "img_w", "input_scale", "keep_top_k", "keepdims", "kernels",
    "leakyrelu_coefficient", "max_limit", "max_size", "mean", "min_size",
    "mode", "nearest_mode", "new_axis_mask", "nms_threshold", "num_classes",
    "offset", "output_dim", "output_padding", "output_shape", "padding",
    "padding_values", "paddings", "pooling_type", "post_nms_top_n",
    "pre_nms_top_n", "ratios", "reduce_type", "round_mode", "scalar_input",
    "scalar_input_index", "scales", "select_last_index", "shape",
    "share_location", "shrink_axis_mask", "size", "slice", "spatial_scale",
    "split", "starts", "step_h", "step_w", "steps", "strides", "top_k",
    "transpose_a", "transpose_b", "type", "use_log", "value", "variance",
    "variance_encoded_in_target", "width_scale", "winograd"};

const char *const kStringValues[] = {
    "",          "SAME",      "VALID",     "DCR",       "CRD",
    "RELU",      "RELUX",     "TANH",      "SIGMOID",   "LEAKYRELU",
    "PRELU",     "ELU",       "GELU",      "CONSTANT",  "REFLECT",
    "SYMMETRIC", "EDGE",      "half_pixel", "asymmetric", "align_corners"};

void AddAnyArg(FuzzedDataProvider *data, OperatorDef *op) {
  const std::string name = Pick(data, kArgNames);
  switch (data->ConsumeIntegralInRange(0, 4)) {
    case 0:
      ModelBuilder::AddIntArg(op, name, AnyInt(data));
      break;
    case 1:
      ModelBuilder::AddFloatArg(op, name, AnyFloat(data));
      break;
    case 2: {
      std::vector<int64_t> values(data->ConsumeIntegralInRange(0, 8));
      for (int64_t &v : values) v = AnyInt(data);
      ModelBuilder::AddIntsArg(op, name, values);
      break;
    }
    case 3: {
      std::vector<float> values(data->ConsumeIntegralInRange(0, 8));
      for (float &v : values) v = AnyFloat(data);
      ModelBuilder::AddFloatsArg(op, name, values);
      break;
    }
    default:
      ModelBuilder::AddStringArg(op, name, Pick(data, kStringValues));
  }
}

void AddAnyConstant(FuzzedDataProvider *data, const std::string &name,
                    ModelBuilder *builder) {
  const std::vector<int64_t> dims = AnyDims(data, 4);
  const int64_t count = std::max<int64_t>(ElementCount(dims), 0);
  const int kind = data->ConsumeIntegralInRange(0, 4);
  if (kind == 0) {
    std::vector<uint8_t> values(count);
    for (uint8_t &v : values) v = data->ConsumeIntegral<uint8_t>();
    builder->AddUint8Tensor(name, dims, values, AnyFloat(data),
                            static_cast<int32_t>(AnyInt(data)));
  } else if (kind <= 2) {
    std::vector<int32_t> values(count);
    for (int32_t &v : values) v = static_cast<int32_t>(AnyInt(data));
    builder->AddInt32Tensor(name, dims, values);
  } else {
    std::vector<float> values(count);
    for (float &v : values) v = AnyFloat(data);
    builder->AddFloatTensor(name, dims, values);
  }
}

void PrintModel(const NetDef &net) {
  for (const InputOutputInfo &info : net.input_info()) {
    std::fprintf(stderr, "input %s type %d format %d dims", info.name().c_str(),
                 info.data_type(), info.data_format());
    for (int32_t dim : info.dims()) std::fprintf(stderr, " %d", dim);
    std::fprintf(stderr, "\n");
  }
  for (const ConstTensor &tensor : net.tensors()) {
    std::fprintf(stderr, "tensor %s type %d dims", tensor.name().c_str(),
                 tensor.data_type());
    for (int64_t dim : tensor.dims()) {
      std::fprintf(stderr, " %lld", static_cast<long long>(dim));
    }
    std::fprintf(stderr, "\n");
  }
  for (const OperatorDef &op : net.op()) {
    std::fprintf(stderr, "op %s (%s) inputs", op.name().c_str(),
                 op.type().c_str());
    for (const std::string &input : op.input()) {
      std::fprintf(stderr, " %s", input.c_str());
    }
    std::fprintf(stderr, " outputs");
    for (const std::string &output : op.output()) {
      std::fprintf(stderr, " %s", output.c_str());
    }
    std::fprintf(stderr, "\n");
    for (const Argument &arg : op.arg()) {
      std::fprintf(stderr, "  arg %s", arg.name().c_str());
      if (arg.has_i()) {
        std::fprintf(stderr, " i=%lld", static_cast<long long>(arg.i()));
      }
      if (arg.has_f()) std::fprintf(stderr, " f=%g", arg.f());
      if (arg.has_s()) std::fprintf(stderr, " s='%s'", arg.s().c_str());
      for (int64_t v : arg.ints()) {
        std::fprintf(stderr, " %lld", static_cast<long long>(v));
      }
      for (float v : arg.floats()) std::fprintf(stderr, " %gf", v);
      std::fprintf(stderr, "\n");
    }
  }
}

}  // namespace

// One fuzz input: a model of ops loaded and run.
int FuzzOneInput(const uint8_t *bytes, size_t size) {
  static const std::vector<std::string> kTypes = OpRegistry::Global().Types();
  FuzzedDataProvider data(bytes, size);
  ModelBuilder builder("fuzz");
  std::vector<int64_t> input_dims = AnyDims(&data, 5);
  // A valid model with a huge input only measures the machine's memory.
  if (ElementCount(input_dims) < 0) input_dims = {1, 3, 3, 2};
  const bool int32_input = data.ConsumeIntegralInRange(0, 7) == 0;
  const int format = data.ConsumeIntegralInRange(0, 3) == 0 ? 2 : 1;
  builder.AddInput("in0", input_dims, int32_input ? DT_INT32 : DT_FLOAT,
                   format);
  std::vector<std::string> names = {"in0"};
  const int constants = data.ConsumeIntegralInRange(0, 5);
  for (int c = 0; c < constants; ++c) {
    names.push_back("w" + std::to_string(c));
    AddAnyConstant(&data, names.back(), &builder);
  }
  const int ops = data.ConsumeIntegralInRange(1, 3);
  std::string last_output;
  for (int o = 0; o < ops; ++o) {
    const std::string &type = Pick(&data, kTypes);
    // Up to 5: PointwiseDepthwiseConv2d takes five.
    std::vector<std::string> inputs(data.ConsumeIntegralInRange(0, 5));
    for (std::string &input : inputs) input = Pick(&data, names);
    last_output = "t" + std::to_string(o);
    std::vector<std::string> outputs = {last_output};
    if (data.ConsumeIntegralInRange(0, 5) == 0) {
      outputs.push_back(last_output + "_extra");
    }
    OperatorDef *op =
        builder.AddOp(type, "op" + std::to_string(o), inputs, outputs);
    const int args = data.ConsumeIntegralInRange(0, 7);
    for (int a = 0; a < args; ++a) AddAnyArg(&data, op);
    names.push_back(last_output);
  }
  builder.AddOutput(last_output, {});
  if (std::getenv("MACE_FUZZ_DUMP") != nullptr) PrintModel(builder.net());
  std::shared_ptr<MaceEngine> engine;
  const MaceStatus loaded =
      LoadModel(&data, builder, {"in0"}, {last_output}, &engine);
  // Valid models with huge intermediates are loaded, not run.
  if (loaded != MaceStatus::MACE_SUCCESS ||
      engine->planned_peak_bytes() > (64 << 20)) {
    return 0;
  }
  RunOnce(&data, engine.get(),
          {{"in0", input_dims, int32_input,
            format == 2 ? DataFormat::NCHW : DataFormat::NHWC}});
  return 0;
}

}  // namespace fuzz
}  // namespace mace
