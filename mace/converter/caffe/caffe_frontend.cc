#include "mace/converter/caffe/caffe_frontend.h"

#include <algorithm>
#include <map>
#include <set>

#include "mace/converter/caffe/caffe_lowering.h"
#include "mace/converter/caffe/caffe_net.h"
#include "mace/core/status.h"

namespace mace {
namespace converter {
namespace {

using BlobMap = std::map<std::string, std::vector<CaffeBlob>>;

// Layer types whose first top is a net input fed at run time.
bool IsInputLayer(const std::string &type) {
  static const std::set<std::string> kTypes = {
      "Input",     "Data",          "ImageData", "MemoryData",
      "DummyData", "AnnotatedData", "HDF5Data",  "WindowData"};
  return kTypes.count(type) > 0;
}

// Where each Caffe blob name currently lives in the graph. Caffe reuses
// blob names for in-place layers (ReLU with top == bottom); the graph needs
// one name per value, so every write but the last gets a fresh name and the
// last write keeps the Caffe name (the one users see for outputs).
class BlobNames {
 public:
  BlobNames(const CaffeNetDef &net, GraphBuilder *graph) : graph_(graph) {
    // Every Caffe blob name is reserved up front, so no temporary made
    // before a blob's last write can take its name.
    for (const CaffeLayerDef &layer : net.layers) {
      for (const std::string &top : layer.tops) ++writes_left_[top];
      for (const std::string &b : layer.bottoms) graph->UniqueName(b);
      for (const std::string &t : layer.tops) graph->UniqueName(t);
    }
  }

  bool Defined(const std::string &blob) const {
    return current_.count(blob) > 0;
  }
  std::string Current(const std::string &blob) const {
    auto it = current_.find(blob);
    return it == current_.end() ? blob : it->second;
  }
  // The graph name a layer writes `blob` to.
  std::string NextWrite(const std::string &blob, const std::string &layer,
                        bool keep_caffe_name) {
    const int left = --writes_left_[blob];
    const bool last = left <= 0 && keep_caffe_name && !graph_->Has(blob);
    return last ? blob : graph_->UniqueName(blob + "__" + layer);
  }
  void Set(const std::string &blob, const std::string &graph_name) {
    current_[blob] = graph_name;
  }

 private:
  GraphBuilder *graph_;
  std::map<std::string, int> writes_left_;
  std::map<std::string, std::string> current_;
};

MaceStatus InputShapeFromLayer(const CaffeLayerDef &layer, int top,
                               Shape *shape) {
  const std::string what = "layer '" + layer.name + "' (" + layer.type + ")";
  const TextMessage *param = nullptr;
  MACE_RETURN_IF_ERROR(layer.params->GetMessage(
      what, layer.type == "DummyData" ? "dummy_data_param" : "input_param",
      &param));
  const auto shapes = param->FindAll("shape");
  if (shapes.empty()) {
    return InvalidArgs(what, ": the shape of input '", layer.tops[top],
                       "' is not declared; give it with --input-shape ",
                       layer.tops[top], ":N,C,H,W");
  }
  if (shapes.size() != 1 && shapes.size() != layer.tops.size()) {
    return InvalidArgs(what, ": ", shapes.size(), " shapes for ",
                       layer.tops.size(), " tops");
  }
  const TextField *field = shapes.size() == 1 ? shapes[0] : shapes[top];
  if (!field->is_message()) {
    return InvalidArgs(what, ": 'shape' (", field->Where(),
                       ") should be a message { dim: ... }");
  }
  std::vector<int64_t> dims;
  MACE_RETURN_IF_ERROR(field->message->GetInts(what, "dim", &dims));
  for (int64_t d : dims) {
    if (d <= 0) {
      return InvalidArgs(what, ": input '", layer.tops[top], "' shape ",
                         ShapeToString(dims),
                         " has a dimension <= 0; give it with --input-shape");
    }
  }
  *shape = dims;
  return MaceStatus::MACE_SUCCESS;
}

class CaffeConverter {
 public:
  CaffeConverter(const CaffeNetDef &net, const BlobMap &blobs,
                 const ConvertOptions &options, GraphBuilder *graph)
      : net_(net),
        blobs_(blobs),
        options_(options),
        graph_(graph),
        names_(net, graph),
        context_(graph) {}

  MaceStatus Run(std::vector<ConversionGap> *gaps);

 private:
  MaceStatus AddInput(const std::string &blob, const Shape &declared,
                      const std::string &layer_name);
  MaceStatus AddInputs();
  void LowerLayers(std::vector<ConversionGap> *gaps);
  // Whether layers_[i] (BatchNorm) and layers_[i + 1] (Scale) fold.
  bool PairsWithScale(size_t i) const;
  MaceStatus AddOutputs();
  std::vector<std::string> DefaultOutputs() const;
  CaffeLayer MakeLayer(const CaffeLayerDef &def,
                       const std::vector<std::string> &tops_out);

  const CaffeNetDef &net_;
  const BlobMap &blobs_;
  const ConvertOptions &options_;
  GraphBuilder *graph_;
  BlobNames names_;
  CaffeContext context_;
  std::set<std::string> input_blobs_;
  std::set<std::string> poisoned_;
  std::set<std::string> outputs_wanted_;
};

MaceStatus CaffeConverter::AddInput(const std::string &blob,
                                    const Shape &declared,
                                    const std::string &layer_name) {
  if (input_blobs_.count(blob)) {
    return InvalidArgs("input '", blob, "' is declared twice");
  }
  input_blobs_.insert(blob);
  auto frozen = options_.constant_inputs.find(blob);
  if (frozen != options_.constant_inputs.end()) {
    MACE_RETURN_IF_ERROR(
        AddConstantInput(blob, frozen->second, /*is_int=*/false, graph_));
    names_.Set(blob, blob);
    return MaceStatus::MACE_SUCCESS;
  }
  Shape shape = declared;
  auto given = options_.input_shapes.find(blob);
  if (given != options_.input_shapes.end()) shape = given->second;
  if (shape.empty()) {
    return InvalidArgs("input '", blob, "' of layer '", layer_name,
                       "' has no declared shape; give it with --input-shape ",
                       blob, ":N,C,H,W");
  }
  if (shape.size() == 4 && options_.inputs_nhwc) {
    const Shape nhwc{shape[0], shape[2], shape[3], shape[1]};
    MACE_RETURN_IF_ERROR(graph_->AddInput(blob, DT_FLOAT, nhwc, 1));
    const std::string nchw = graph_->UniqueName(blob + "__nchw");
    MACE_RETURN_IF_ERROR(context_.Emit("Transpose", nchw, {blob}, {nchw},
                                       {OpArg::Ints("dims", {0, 3, 1, 2})}));
    names_.Set(blob, nchw);
  } else {
    MACE_RETURN_IF_ERROR(
        graph_->AddInput(blob, DT_FLOAT, shape, shape.size() == 4 ? 2 : 0));
    names_.Set(blob, blob);
  }
  return MaceStatus::MACE_SUCCESS;
}

MaceStatus CaffeConverter::AddInputs() {
  for (size_t i = 0; i < net_.inputs.size(); ++i) {
    const Shape declared =
        i < net_.input_shapes.size() ? net_.input_shapes[i] : Shape();
    MACE_RETURN_IF_ERROR(AddInput(net_.inputs[i], declared, "(net input)"));
  }
  for (const CaffeLayerDef &layer : net_.layers) {
    if (!IsInputLayer(layer.type)) continue;
    for (size_t t = 0; t < layer.tops.size(); ++t) {
      // Data layers' second top is the training label: not an input.
      if (layer.type != "Input" && layer.type != "DummyData" && t > 0) {
        poisoned_.insert(layer.tops[t]);
        continue;
      }
      Shape declared;
      if (!options_.input_shapes.count(layer.tops[t]) &&
          !options_.constant_inputs.count(layer.tops[t])) {
        MACE_RETURN_IF_ERROR(InputShapeFromLayer(layer, t, &declared));
      }
      MACE_RETURN_IF_ERROR(AddInput(layer.tops[t], declared, layer.name));
    }
  }
  std::set<std::string> unknown;
  for (const auto &entry : options_.input_shapes) unknown.insert(entry.first);
  for (const auto &entry : options_.constant_inputs) {
    unknown.insert(entry.first);
  }
  for (const std::string &blob : input_blobs_) unknown.erase(blob);
  if (!unknown.empty()) {
    return InvalidArgs("--input-shape / --constant-input names '",
                       *unknown.begin(),
                       "', which is not an input of the "
                       "net");
  }
  if (input_blobs_.empty()) {
    return InvalidArgs(
        "the net declares no input (no Input layer and no "
        "'input:' fields)");
  }
  return MaceStatus::MACE_SUCCESS;
}

CaffeLayer CaffeConverter::MakeLayer(const CaffeLayerDef &def,
                                     const std::vector<std::string> &tops) {
  std::vector<std::string> bottoms;
  for (const std::string &b : def.bottoms) bottoms.push_back(names_.Current(b));
  auto it = blobs_.find(def.name);
  return CaffeLayer(def, it == blobs_.end() ? nullptr : &it->second,
                    std::move(bottoms), tops);
}

bool CaffeConverter::PairsWithScale(size_t i) const {
  if (i + 1 >= net_.layers.size()) return false;
  const CaffeLayerDef &bn = net_.layers[i];
  const CaffeLayerDef &scale = net_.layers[i + 1];
  if (scale.type != "Scale" || scale.bottoms.size() != 1 ||
      bn.tops.size() != 1 || scale.tops.size() != 1 ||
      scale.bottoms[0] != bn.tops[0]) {
    return false;
  }
  const TextMessage *param = nullptr;
  int64_t axis = 1, num_axes = 1;
  const std::string what = "layer '" + scale.name + "'";
  if (scale.params->GetMessage(what, "scale_param", &param) !=
          MaceStatus::MACE_SUCCESS ||
      param->GetInt(what, "axis", 1, &axis) != MaceStatus::MACE_SUCCESS ||
      param->GetInt(what, "num_axes", 1, &num_axes) !=
          MaceStatus::MACE_SUCCESS ||
      axis != 1 || num_axes != 1) {
    return false;  // lowered on its own (and its errors reported there)
  }
  const std::string &mid = bn.tops[0];
  if (outputs_wanted_.count(mid) && scale.tops[0] != mid) return false;
  // The BatchNorm value must not be read after the Scale (unless the Scale
  // overwrote that name in place).
  if (scale.tops[0] == mid) return true;
  for (size_t j = i + 2; j < net_.layers.size(); ++j) {
    const auto &bottoms = net_.layers[j].bottoms;
    if (std::find(bottoms.begin(), bottoms.end(), mid) != bottoms.end()) {
      return false;
    }
  }
  return true;
}

void CaffeConverter::LowerLayers(std::vector<ConversionGap> *gaps) {
  const CaffeLoweringTable &table = CaffeLowerings();
  const bool nhwc_out = options_.outputs_nhwc;
  for (size_t i = 0; i < net_.layers.size(); ++i) {
    const CaffeLayerDef &def = net_.layers[i];
    if (IsInputLayer(def.type)) continue;
    const bool paired = def.type == "BatchNorm" && PairsWithScale(i);
    const CaffeLayerDef &last = paired ? net_.layers[i + 1] : def;
    auto poison = [&]() {
      poisoned_.insert(def.tops.begin(), def.tops.end());
      poisoned_.insert(last.tops.begin(), last.tops.end());
    };
    auto lowering = table.find(def.type);
    if (lowering == table.end() && def.type != "BatchNorm") {
      gaps->push_back({def.type, def.name, "layer type is not supported"});
      poison();
      continue;
    }
    bool skip = false;
    std::string undefined;
    for (const std::string &b : def.bottoms) {
      skip = skip || poisoned_.count(b) > 0;
      if (!names_.Defined(b) && !poisoned_.count(b)) undefined = b;
    }
    if (skip) {
      poison();
      if (paired) ++i;
      continue;
    }
    if (!undefined.empty()) {
      gaps->push_back({def.type, def.name,
                       "bottom '" + undefined +
                           "' is not produced by any earlier layer or input"});
      poison();
      if (paired) ++i;
      continue;
    }
    // The graph names this layer (or pair) writes.
    std::vector<std::string> tops;
    for (const std::string &t : last.tops) {
      const bool keep = !(nhwc_out && outputs_wanted_.count(t));
      tops.push_back(names_.NextWrite(t, last.name, keep));
    }
    if (paired) {
      for (const std::string &t : def.tops) {
        names_.NextWrite(t, def.name, false);  // the folded-away write
      }
    }
    CaffeLayer layer = MakeLayer(def, tops);
    MaceStatus status;
    if (paired) {
      CaffeLayer scale = MakeLayer(last, tops);
      status = LowerCaffeBatchNormScale(layer, &scale, &context_);
      ++i;
    } else if (def.type == "BatchNorm") {
      status = LowerCaffeBatchNormScale(layer, nullptr, &context_);
    } else {
      status = lowering->second(layer, &context_);
    }
    if (status != MaceStatus::MACE_SUCCESS) {
      gaps->push_back({def.type, def.name, status.information()});
      poison();
      continue;
    }
    for (size_t t = 0; t < last.tops.size(); ++t) {
      if (graph_->Has(tops[t])) {
        names_.Set(last.tops[t], tops[t]);
      } else {
        poisoned_.insert(last.tops[t]);
      }
    }
  }
}

std::vector<std::string> CaffeConverter::DefaultOutputs() const {
  std::vector<std::string> available;
  for (const CaffeLayerDef &layer : net_.layers) {
    if (IsInputLayer(layer.type)) continue;
    for (const std::string &b : layer.bottoms) {
      available.erase(std::remove(available.begin(), available.end(), b),
                      available.end());
    }
    for (const std::string &t : layer.tops) {
      if (std::find(available.begin(), available.end(), t) == available.end()) {
        available.push_back(t);
      }
    }
  }
  return available;
}

MaceStatus CaffeConverter::AddOutputs() {
  for (const std::string &blob : outputs_wanted_) {
    if (!names_.Defined(blob)) {
      return InvalidArgs("output '", blob, "' is not produced by the net");
    }
    const std::string internal = names_.Current(blob);
    const int rank = context_.RankOf(internal);
    if (input_blobs_.count(blob) && internal != blob) {
      // A layer rewrote an input in place: the output needs its own name.
      MACE_RETURN_IF_ERROR(graph_->AddOutput(internal, rank == 4 ? 2 : 0));
      continue;
    }
    if (internal == blob) {
      MACE_RETURN_IF_ERROR(graph_->AddOutput(blob, rank == 4 ? 2 : 0));
      continue;
    }
    if (rank == 4 && options_.outputs_nhwc) {
      MACE_RETURN_IF_ERROR(context_.Emit("Transpose", blob + "__to_nhwc",
                                         {internal}, {blob},
                                         {OpArg::Ints("dims", {0, 2, 3, 1})}));
      MACE_RETURN_IF_ERROR(graph_->AddOutput(blob, 1));
    } else {
      MACE_RETURN_IF_ERROR(
          context_.Emit("Identity", blob + "__output", {internal}, {blob}));
      MACE_RETURN_IF_ERROR(graph_->AddOutput(blob, rank == 4 ? 2 : 0));
    }
  }
  return MaceStatus::MACE_SUCCESS;
}

MaceStatus CaffeConverter::Run(std::vector<ConversionGap> *gaps) {
  std::vector<std::string> outputs = options_.output_names;
  if (outputs.empty()) outputs = DefaultOutputs();
  if (outputs.empty()) {
    return InvalidArgs("the net has no output (every top is consumed)");
  }
  outputs_wanted_.insert(outputs.begin(), outputs.end());
  MACE_RETURN_IF_ERROR(AddInputs());
  LowerLayers(gaps);
  if (!gaps->empty()) return mace::Unsupported(GapReport(*gaps));
  return AddOutputs();
}

}  // namespace

MaceStatus ConvertCaffeModel(const std::string &prototxt_path,
                             const std::string &caffemodel_path,
                             const ConvertOptions &options, GraphBuilder *graph,
                             std::vector<ConversionGap> *gaps) {
  gaps->clear();
  if (caffemodel_path.empty()) {
    return InvalidArgs(
        "a Caffe net needs its weights: give the "
        ".caffemodel with --weight-file (weight_file_path in "
        "the deployment YAML)");
  }
  CaffeNetDef net;
  MACE_RETURN_IF_ERROR(ReadCaffePrototxt(prototxt_path, &net));
  BlobMap blobs;
  MACE_RETURN_IF_ERROR(ReadCaffeModelBlobs(caffemodel_path, &blobs));
  return ConvertCaffeNet(net, blobs, options, graph, gaps);
}

MaceStatus ConvertCaffeNet(
    const CaffeNetDef &net,
    const std::map<std::string, std::vector<CaffeBlob>> &blobs,
    const ConvertOptions &options, GraphBuilder *graph,
    std::vector<ConversionGap> *gaps) {
  gaps->clear();
  CaffeConverter converter(net, blobs, options, graph);
  return converter.Run(gaps);
}

}  // namespace converter
}  // namespace mace
