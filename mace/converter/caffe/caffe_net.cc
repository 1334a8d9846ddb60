#include "mace/converter/caffe/caffe_net.h"

#include "mace/converter/caffe/caffe.pb.h"
#include "mace/core/status.h"
#include "mace/model/model_loader.h"

namespace mace {
namespace converter {
namespace {

constexpr char kUpgradeHint[] =
    "this is a V0 Caffe net (layers { layer { ... } }), which is not "
    "supported: upgrade it with Caffe's tools first: "
    "upgrade_net_proto_text old.prototxt new.prototxt and "
    "upgrade_net_proto_binary old.caffemodel new.caffemodel";

// Whether a layer runs in the TEST phase (Caffe's NetStateRule matching,
// reduced to the phase: stages and levels are not used by deployed nets).
MaceStatus RunsInTestPhase(const std::string &what, const TextMessage &layer,
                           bool *runs) {
  auto phase_of = [&](const TextField *rule, std::string *phase) {
    const TextMessage *message = nullptr;
    if (!rule->is_message()) {
      return InvalidArgs(what, ": field '", rule->name, "' (", rule->Where(),
                         ") should be a message");
    }
    message = rule->message.get();
    return message->GetString(what, "phase", "", phase);
  };
  const auto includes = layer.FindAll("include");
  const auto excludes = layer.FindAll("exclude");
  std::string phase;
  MACE_RETURN_IF_ERROR(layer.GetString(what, "phase", "TEST", &phase));
  *runs = phase != "TRAIN" && phase != "0";
  if (!includes.empty()) {
    *runs = false;
    for (const TextField *rule : includes) {
      std::string p;
      MACE_RETURN_IF_ERROR(phase_of(rule, &p));
      if (p.empty() || p == "TEST" || p == "1") *runs = true;
    }
  }
  for (const TextField *rule : excludes) {
    std::string p;
    MACE_RETURN_IF_ERROR(phase_of(rule, &p));
    if (p == "TEST" || p == "1") *runs = false;
  }
  return MaceStatus::MACE_SUCCESS;
}

MaceStatus ReadShapeMessage(const std::string &what, const TextField &field,
                            Shape *shape) {
  if (!field.is_message()) {
    return InvalidArgs(what, ": field '", field.name, "' (", field.Where(),
                       ") should be a message { dim: ... }");
  }
  std::vector<int64_t> dims;
  MACE_RETURN_IF_ERROR(field.message->GetInts(what, "dim", &dims));
  for (int64_t d : dims) {
    if (d < 0) {
      return InvalidArgs(what, ": shape at ", field.Where(),
                         " has a negative dimension ", d);
    }
  }
  *shape = dims;
  return MaceStatus::MACE_SUCCESS;
}

MaceStatus ReadLegacyInputs(const std::string &path, CaffeNetDef *net) {
  const std::string what = "'" + path + "'";
  const TextMessage &text = net->text;
  for (const TextField *field : text.FindAll("input")) {
    if (field->is_message()) {
      return InvalidArgs(what, ": field 'input' (", field->Where(),
                         ") should be a blob name");
    }
    net->inputs.push_back(field->scalar);
  }
  for (const TextField *field : text.FindAll("input_shape")) {
    Shape shape;
    MACE_RETURN_IF_ERROR(ReadShapeMessage(what, *field, &shape));
    net->input_shapes.push_back(shape);
  }
  std::vector<int64_t> dims;
  MACE_RETURN_IF_ERROR(text.GetInts(what, "input_dim", &dims));
  if (!dims.empty()) {
    if (!net->input_shapes.empty() || dims.size() != 4 * net->inputs.size()) {
      return InvalidArgs(what, ": 'input_dim' has ", dims.size(),
                         " values; expected 4 per input (", net->inputs.size(),
                         " inputs) and no input_shape");
    }
    for (size_t i = 0; i < net->inputs.size(); ++i) {
      net->input_shapes.push_back(
          Shape(dims.begin() + 4 * i, dims.begin() + 4 * i + 4));
    }
  }
  if (!net->input_shapes.empty() &&
      net->input_shapes.size() != net->inputs.size()) {
    return InvalidArgs(what, ": ", net->inputs.size(), " inputs but ",
                       net->input_shapes.size(), " input shapes");
  }
  return MaceStatus::MACE_SUCCESS;
}

MaceStatus ReadLayer(const std::string &path, const TextField &field, bool v1,
                     CaffeLayerDef *layer) {
  const std::string at = StrCat("'", path, "' ", field.Where());
  if (!field.is_message()) {
    return InvalidArgs(at, ": '", field.name, "' should be a message");
  }
  const TextMessage &text = *field.message;
  if (v1 && text.Has("layer")) return InvalidArgs(at, ": ", kUpgradeHint);
  const std::string what = at + " (" + field.name + ")";
  MACE_RETURN_IF_ERROR(text.GetString(what, "name", "", &layer->name));
  std::string type;
  MACE_RETURN_IF_ERROR(text.GetString(what, "type", "", &type));
  if (type.empty()) {
    return InvalidArgs(at, ": layer '", layer->name, "' has no type");
  }
  if (v1) {
    const std::string v2 = CaffeV1TypeName(type);
    if (v2.empty()) {
      return InvalidArgs(at, ": layer '", layer->name, "' has V1 type '", type,
                         "', which is not a V1 LayerType");
    }
    type = v2;
  }
  layer->type = type;
  if (layer->name.empty()) layer->name = StrCat(type, "@line", field.line);
  for (const char *list : {"bottom", "top"}) {
    for (const TextField *blob : text.FindAll(list)) {
      if (blob->is_message()) {
        return InvalidArgs(at, ": layer '", layer->name, "' field '", list,
                           "' should be a blob name");
      }
      (list[0] == 'b' ? layer->bottoms : layer->tops).push_back(blob->scalar);
    }
  }
  layer->params = &text;
  layer->line = field.line;
  return MaceStatus::MACE_SUCCESS;
}

MaceStatus FillBlob(const caffe::BlobProto &proto, const std::string &what,
                    CaffeBlob *blob) {
  if (proto.has_shape()) {
    blob->shape.assign(proto.shape().dim().begin(), proto.shape().dim().end());
  } else {
    blob->shape = {proto.num(), proto.channels(), proto.height(),
                   proto.width()};
    // Legacy blobs of fewer dims leave the leading ones 0 or 1; Caffe reads
    // them as 4-D with the missing sizes 1.
    for (int64_t &d : blob->shape) {
      if (d == 0) d = 1;
    }
  }
  int64_t count = 1;
  for (int64_t d : blob->shape) {
    if (d < 0 || (d > 0 && count > (int64_t{1} << 40) / d)) {
      return InvalidArgs(what, " has an invalid shape ",
                         ShapeToString(blob->shape));
    }
    count *= d;
  }
  const int64_t floats = proto.data_size();
  const int64_t doubles = proto.double_data_size();
  if (floats != count && doubles != count) {
    return InvalidArgs(what, " has shape ", ShapeToString(blob->shape), " (",
                       count, " values) but holds ",
                       doubles > floats ? doubles : floats, " values");
  }
  if (floats == count) {
    blob->values.assign(proto.data().begin(), proto.data().end());
  } else {
    blob->values.assign(proto.double_data().begin(), proto.double_data().end());
  }
  return MaceStatus::MACE_SUCCESS;
}

template <typename LayerProto>
MaceStatus AddLayerBlobs(const LayerProto &layer, const std::string &path,
                         std::map<std::string, std::vector<CaffeBlob>> *blobs) {
  if (layer.blobs_size() == 0) return MaceStatus::MACE_SUCCESS;
  std::vector<CaffeBlob> &list = (*blobs)[layer.name()];
  list.clear();
  for (int i = 0; i < layer.blobs_size(); ++i) {
    CaffeBlob blob;
    MACE_RETURN_IF_ERROR(FillBlob(
        layer.blobs(i),
        StrCat("'", path, "': layer '", layer.name(), "' blob ", i), &blob));
    list.push_back(std::move(blob));
  }
  return MaceStatus::MACE_SUCCESS;
}

}  // namespace

std::string CaffeV1TypeName(const std::string &v1_type) {
  static const std::map<std::string, std::string> kNames = {
      {"ABSVAL", "AbsVal"},
      {"ACCURACY", "Accuracy"},
      {"ARGMAX", "ArgMax"},
      {"BNLL", "BNLL"},
      {"CONCAT", "Concat"},
      {"CONTRASTIVE_LOSS", "ContrastiveLoss"},
      {"CONVOLUTION", "Convolution"},
      {"DATA", "Data"},
      {"DECONVOLUTION", "Deconvolution"},
      {"DROPOUT", "Dropout"},
      {"DUMMY_DATA", "DummyData"},
      {"EUCLIDEAN_LOSS", "EuclideanLoss"},
      {"ELTWISE", "Eltwise"},
      {"EXP", "Exp"},
      {"FLATTEN", "Flatten"},
      {"HDF5_DATA", "HDF5Data"},
      {"HDF5_OUTPUT", "HDF5Output"},
      {"HINGE_LOSS", "HingeLoss"},
      {"IM2COL", "Im2col"},
      {"IMAGE_DATA", "ImageData"},
      {"INFOGAIN_LOSS", "InfogainLoss"},
      {"INNER_PRODUCT", "InnerProduct"},
      {"LRN", "LRN"},
      {"MEMORY_DATA", "MemoryData"},
      {"MULTINOMIAL_LOGISTIC_LOSS", "MultinomialLogisticLoss"},
      {"MVN", "MVN"},
      {"POOLING", "Pooling"},
      {"POWER", "Power"},
      {"RELU", "ReLU"},
      {"SIGMOID", "Sigmoid"},
      {"SIGMOID_CROSS_ENTROPY_LOSS", "SigmoidCrossEntropyLoss"},
      {"SILENCE", "Silence"},
      {"SOFTMAX", "Softmax"},
      {"SOFTMAX_LOSS", "SoftmaxWithLoss"},
      {"SPLIT", "Split"},
      {"SLICE", "Slice"},
      {"TANH", "TanH"},
      {"WINDOW_DATA", "WindowData"},
      {"THRESHOLD", "Threshold"},
  };
  auto it = kNames.find(v1_type);
  return it == kNames.end() ? std::string() : it->second;
}

MaceStatus ParseCaffePrototxt(const std::string &text, const std::string &path,
                              CaffeNetDef *net) {
  *net = CaffeNetDef();
  MACE_RETURN_IF_ERROR(ParseTextFormat(text, path, &net->text));
  const auto v2_layers = net->text.FindAll("layer");
  const auto v1_layers = net->text.FindAll("layers");
  if (!v2_layers.empty() && !v1_layers.empty()) {
    return InvalidArgs("'", path,
                       "' mixes V2 'layer' and V1 'layers' blocks; use one "
                       "(upgrade_net_proto_text converts V1 nets)");
  }
  net->v1 = !v1_layers.empty();
  MACE_RETURN_IF_ERROR(ReadLegacyInputs(path, net));
  for (const TextField *field : net->v1 ? v1_layers : v2_layers) {
    CaffeLayerDef layer;
    MACE_RETURN_IF_ERROR(ReadLayer(path, *field, net->v1, &layer));
    bool runs = true;
    MACE_RETURN_IF_ERROR(RunsInTestPhase(
        StrCat("'", path, "' layer '", layer.name, "'"), *layer.params, &runs));
    if (runs) net->layers.push_back(std::move(layer));
  }
  if (net->layers.empty()) {
    return InvalidArgs("'", path, "' defines no layers (for the TEST phase)");
  }
  return MaceStatus::MACE_SUCCESS;
}

MaceStatus ReadCaffePrototxt(const std::string &path, CaffeNetDef *net) {
  std::string text;
  MACE_RETURN_IF_ERROR(ReadFileToString(path, &text));
  return ParseCaffePrototxt(text, path, net);
}

MaceStatus ParseCaffeModelBlobs(
    const std::string &bytes, const std::string &path,
    std::map<std::string, std::vector<CaffeBlob>> *blobs) {
  blobs->clear();
  caffe::NetParameter net;
  if (bytes.empty() || !net.ParseFromString(bytes)) {
    return InvalidArgs("'", path,
                       "' is not a valid .caffemodel (empty, truncated or "
                       "corrupted protobuf)");
  }
  if (net.layer_size() == 0 && net.layers_size() == 0) {
    return InvalidArgs("'", path, "' holds no layers");
  }
  for (const caffe::V1LayerParameter &layer : net.layers()) {
    if (layer.has_layer()) {
      return InvalidArgs("'", path, "': ", kUpgradeHint);
    }
    MACE_RETURN_IF_ERROR(AddLayerBlobs(layer, path, blobs));
  }
  for (const caffe::LayerParameter &layer : net.layer()) {
    MACE_RETURN_IF_ERROR(AddLayerBlobs(layer, path, blobs));
  }
  return MaceStatus::MACE_SUCCESS;
}

MaceStatus ReadCaffeModelBlobs(
    const std::string &path,
    std::map<std::string, std::vector<CaffeBlob>> *blobs) {
  std::string bytes;
  MACE_RETURN_IF_ERROR(ReadFileToString(path, &bytes));
  return ParseCaffeModelBlobs(bytes, path, blobs);
}

}  // namespace converter
}  // namespace mace
