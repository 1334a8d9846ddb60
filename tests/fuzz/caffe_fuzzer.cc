// Coverage-guided fuzzer (libFuzzer) of the Caffe converter, then of the
// engine on what it converts. Each input builds a net:
// - a .prototxt: the input declared by an Input layer or the legacy
//   `input:` / `input_shape` fields, then one to four layers of the types
//   the converter lowers (now and then an unknown one, a V1 `layers`
//   block or a phase rule), bottoms drawn from the blobs so far, and a
//   parameter message of a name the lowerings read holding fields of the
//   names they read, with numbers, booleans, enum words, strings, nested
//   messages or lists; now and then fuzzer bytes pasted as text, for the
//   prototxt parser;
// - a .caffemodel: blobs for the layers, in BlobShape or legacy 4-D
//   dims, with data that fills the shape or not.
// Both are parsed as the files would be, converted as `mace convert`
// does, and what converts is loaded and run (converted_model.h says what
// counts as a bug there).
//
// Built by scripts/fuzz_ops.sh (clang, -DMACE_FUZZERS=ON, ASan + UBSan)
// with `caffe` as its third argument; not part of CTest. Replaying an
// artifact with MACE_FUZZ_DUMP=1 prints the prototxt it builds.

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <string>
#include <vector>

#include "mace/converter/caffe/caffe.pb.h"
#include "mace/converter/caffe/caffe_frontend.h"
#include "mace/converter/caffe/caffe_lowering.h"
#include "mace/converter/caffe/caffe_net.h"
#include "tests/fuzz/converted_model.h"
#include "tests/fuzz/fuzz_util.h"

namespace mace {
namespace fuzz {
namespace {

// Parameter messages and fields the layers read
// (mace/converter/caffe/*.cc).
const char *const kParamNames[] = {
    "batch_norm_param", "bias_param", "clip_param", "concat_param",
    "convolution_param", "crop_param", "detection_output_param",
    "eltwise_param", "elu_param", "flatten_param", "inner_product_param",
    "input_param", "interp_param", "lrn_param", "norm_param",
    "permute_param", "pooling_param", "power_param", "prelu_param",
    "prior_box_param", "proposal_param", "psroi_align_param", "relu_param",
    "reshape_param", "scale_param", "shuffle_channel_param", "slice_param",
    "softmax_param"};

const char *const kFieldNames[] = {
    "across_spatial", "alpha", "aspect_ratio", "axis", "background_label_id",
    "base_size", "beta", "bias_term", "channel_shared", "clip", "code_type",
    "coeff", "concat_dim", "confidence_threshold", "dilation", "dim",
    "end_axis", "eps", "eta", "feat_stride", "flip", "global_pooling",
    "group", "group_size", "height", "img_h", "img_size", "img_w",
    "input_dim", "k", "keep_top_k", "kernel_h", "kernel_size", "kernel_w",
    "local_size", "max", "max_size", "min", "min_size", "negative_slope",
    "nms_param", "nms_threshold", "norm_region", "num_axes", "num_classes",
    "num_output", "offset", "operation", "order", "output_dim", "pad",
    "pad_beg", "pad_end", "pad_h", "pad_w", "pool", "post_nms_topn",
    "power", "pre_nms_topn", "ratio", "scale", "shape", "share_location",
    "shift", "shrink_factor", "slice_dim", "slice_point", "spatial_scale",
    "step", "step_h", "step_w", "stride", "stride_h", "stride_w", "top_k",
    "use_global_stats", "variance", "variance_encoded_in_target", "width",
    "zoom_factor", "engine", "bias_filler", "weight_filler"};

const char *const kWords[] = {
    "MAX",  "AVE",  "STOCHASTIC", "SUM",    "PROD",        "CORNER",
    "CENTER_SIZE", "CORNER_SIZE", "ACROSS_CHANNELS", "WITHIN_CHANNEL",
    "true", "false", "TEST", "TRAIN", "nan", "inf", "-inf", "CAFFE"};

const char *const kV1Types[] = {"CONVOLUTION", "POOLING", "RELU", "CONCAT",
                                "INNER_PRODUCT", "SOFTMAX", "DATA",
                                "ELTWISE", "NONE"};

std::string AnyScalar(FuzzedDataProvider *data) {
  switch (data->ConsumeIntegralInRange(0, 4)) {
    case 0:
      return std::to_string(AnyInt(data));
    case 1:
      return std::to_string(AnyFloat(data));
    case 2:
      return Pick(data, kWords);
    case 3:
      return "\"" + data->ConsumeRandomLengthString(8) + "\"";
    default:
      return std::to_string(data->ConsumeIntegralInRange(0, 8));
  }
}

// Fields of a parameter message, nested at most `depth` more levels.
std::string AnyFields(FuzzedDataProvider *data, int depth) {
  std::string text;
  const int fields = data->ConsumeIntegralInRange(0, 6);
  for (int f = 0; f < fields; ++f) {
    const std::string name = Pick(data, kFieldNames);
    const int kind = data->ConsumeIntegralInRange(0, 7);
    if (kind == 0 && depth > 0) {
      text += name + " { " + AnyFields(data, depth - 1) + "} ";
    } else if (kind == 1) {
      text += name + ": [";
      const int n = data->ConsumeIntegralInRange(0, 4);
      for (int i = 0; i < n; ++i) {
        text += (i ? ", " : "") + std::to_string(AnyInt(data));
      }
      text += "] ";
    } else {
      text += name + ": " + AnyScalar(data) + " ";
    }
  }
  return text;
}

std::string ShapeText(const std::vector<int64_t> &dims) {
  std::string text = "shape { ";
  for (int64_t dim : dims) text += "dim: " + std::to_string(dim) + " ";
  return text + "}";
}

// The prototxt; `layer_names` gets the names blobs can be given to.
std::string AnyPrototxt(FuzzedDataProvider *data,
                        const std::vector<std::string> &types,
                        std::vector<std::string> *layer_names) {
  std::string text = "name: \"fuzz\"\n";
  std::vector<std::string> blobs = {"data"};
  std::vector<int64_t> dims = AnyDims(data, 4);
  if (ElementCount(dims) < 0) dims = {1, 3, 4, 4};
  if (data->ConsumeIntegralInRange(0, 3) == 0) {
    text += "input: \"data\"\ninput_" + ShapeText(dims) + "\n";
  } else {
    text += "layer { name: \"data\" type: \"Input\" top: \"data\" "
            "input_param { " + ShapeText(dims) + " } }\n";
  }
  const bool v1 = data->ConsumeIntegralInRange(0, 15) == 0;
  const int layers = data->ConsumeIntegralInRange(1, 4);
  for (int l = 0; l < layers; ++l) {
    const std::string name = "l" + std::to_string(l);
    layer_names->push_back(name);
    if (data->ConsumeIntegralInRange(0, 31) == 0) {
      text += data->ConsumeRandomLengthString(64) + "\n";  // for the parser
      continue;
    }
    std::string layer = v1 ? "layers { " : "layer { ";
    layer += "name: \"" + name + "\" type: ";
    if (v1) {
      layer += Pick(data, kV1Types);
    } else {
      const int choice = data->ConsumeIntegralInRange(0, 31);
      layer += "\"" + (choice == 0 ? std::string("NoSuchLayer")
                                   : Pick(data, types)) + "\"";
    }
    const int bottoms = data->ConsumeIntegralInRange(0, 3);
    for (int b = 0; b < bottoms; ++b) {
      layer += " bottom: \"" + Pick(data, blobs) + "\"";
    }
    const int tops = data->ConsumeIntegralInRange(0, 2);
    for (int t = 0; t < tops; ++t) {
      // In place (a top named like a bottom) now and then, as Caffe's ReLU.
      const std::string top = data->ConsumeIntegralInRange(0, 5) == 0
                                  ? Pick(data, blobs)
                                  : name + "_" + std::to_string(t);
      layer += " top: \"" + top + "\"";
      blobs.push_back(top);
    }
    if (data->ConsumeIntegralInRange(0, 15) == 0) {
      layer += data->ConsumeBool() ? " include { phase: TRAIN }"
                                   : " exclude { phase: TEST }";
    }
    const int params = data->ConsumeIntegralInRange(0, 2);
    for (int p = 0; p < params; ++p) {
      layer += std::string(" ") + Pick(data, kParamNames) + " { " +
               AnyFields(data, 2) + "}";
    }
    text += layer + " }\n";
  }
  return text;
}

// The .caffemodel bytes: blobs for some of the layers.
std::string AnyCaffemodel(FuzzedDataProvider *data,
                          const std::vector<std::string> &layer_names) {
  caffe::NetParameter net;
  for (const std::string &name : layer_names) {
    if (data->ConsumeIntegralInRange(0, 3) == 0) continue;
    caffe::LayerParameter *layer = net.add_layer();
    layer->set_name(name);
    const int blobs = data->ConsumeIntegralInRange(0, 3);
    for (int b = 0; b < blobs; ++b) {
      caffe::BlobProto *blob = layer->add_blobs();
      const std::vector<int64_t> dims = AnyDims(data, 4);
      if (data->ConsumeIntegralInRange(0, 7) == 0 && dims.size() == 4) {
        blob->set_num(static_cast<int32_t>(dims[0]));
        blob->set_channels(static_cast<int32_t>(dims[1]));
        blob->set_height(static_cast<int32_t>(dims[2]));
        blob->set_width(static_cast<int32_t>(dims[3]));
      } else {
        for (int64_t dim : dims) blob->mutable_shape()->add_dim(dim);
      }
      int64_t count = std::max<int64_t>(ElementCount(dims), 0);
      if (data->ConsumeIntegralInRange(0, 15) == 0) {
        count = data->ConsumeIntegralInRange<int64_t>(0, count + 2);
      }
      const bool doubles = data->ConsumeIntegralInRange(0, 7) == 0;
      for (int64_t i = 0; i < count; ++i) {
        if (doubles) {
          blob->add_double_data(AnyFloat(data));
        } else {
          blob->add_data(AnyFloat(data));
        }
      }
    }
  }
  return net.SerializeAsString();
}

}  // namespace

// One fuzz input: a Caffe net converted, loaded and run.
int FuzzOneInput(const uint8_t *bytes, size_t size) {
  static const std::vector<std::string> kTypes = [] {
    std::vector<std::string> types = {"Input", "Data", "DummyData"};
    for (const auto &entry : converter::CaffeLowerings()) {
      types.push_back(entry.first);
    }
    return types;
  }();
  FuzzedDataProvider data(bytes, size);
  std::vector<std::string> layer_names;
  const std::string prototxt = AnyPrototxt(&data, kTypes, &layer_names);
  const std::string caffemodel = AnyCaffemodel(&data, layer_names);
  converter::ConvertOptions options;
  options.inputs_nhwc = data.ConsumeIntegralInRange(0, 3) == 0;
  options.outputs_nhwc = data.ConsumeIntegralInRange(0, 3) == 0;
  if (std::getenv("MACE_FUZZ_DUMP") != nullptr) {
    std::fprintf(stderr, "%s", prototxt.c_str());
  }
  converter::CaffeNetDef net;
  MaceStatus status =
      converter::ParseCaffePrototxt(prototxt, "fuzz.prototxt", &net);
  ExpectExplained(status, "prototxt");
  std::map<std::string, std::vector<converter::CaffeBlob>> blobs;
  if (status == MaceStatus::MACE_SUCCESS) {
    status = converter::ParseCaffeModelBlobs(caffemodel, "fuzz.caffemodel",
                                             &blobs);
    ExpectExplained(status, "caffemodel");
  }
  converter::GraphBuilder graph;
  std::vector<converter::ConversionGap> gaps;
  if (status == MaceStatus::MACE_SUCCESS) {
    status = converter::ConvertCaffeNet(net, blobs, options, &graph, &gaps);
    ExpectExplained(status, "conversion");
  }
  if (status == MaceStatus::MACE_SUCCESS) FinishLoadAndRun(&data, &graph);
  return 0;
}

}  // namespace fuzz
}  // namespace mace
