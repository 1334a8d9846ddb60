// What a Caffe layer lowering sees: the layer (parameters, blobs, resolved
// bottom and top names) and helpers to emit MACE ops into the GraphBuilder.
//
// Lowerings work in Caffe's own layout: the tensor of a Caffe blob holds the
// same values, in the same NCHW shape, as in Caffe. Ops whose MACE kernel is
// NHWC are wrapped as Transpose(NCHW→NHWC) → op → Transpose(NHWC→NCHW); the
// transpose passes remove the pairs afterwards (as in the ONNX frontend).

#ifndef MACE_CONVERTER_CAFFE_CAFFE_LOWERING_H_
#define MACE_CONVERTER_CAFFE_CAFFE_LOWERING_H_

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "mace/converter/caffe/caffe_net.h"
#include "mace/converter/ir/graph_builder.h"
#include "mace/core/status.h"

namespace mace {
namespace converter {

class CaffeContext;

// One layer with typed parameter access; errors name layer and type.
class CaffeLayer {
 public:
  CaffeLayer(const CaffeLayerDef &def, const std::vector<CaffeBlob> *blobs,
             std::vector<std::string> bottoms, std::vector<std::string> tops)
      : def_(def),
        blobs_(blobs),
        bottoms_(std::move(bottoms)),
        tops_(std::move(tops)) {}

  const std::string &name() const { return def_.name; }
  const std::string &type() const { return def_.type; }
  int num_bottoms() const { return static_cast<int>(bottoms_.size()); }
  int num_tops() const { return static_cast<int>(tops_.size()); }
  // Graph names of the bottoms (their current values) and of the tensors
  // the tops must be written to.
  const std::string &Bottom(int i) const { return bottoms_[i]; }
  const std::string &Top(int i) const { return tops_[i]; }

  // Errors unless the counts are within [min, max].
  MaceStatus ExpectBottoms(int min, int max) const;
  MaceStatus ExpectTops(int min, int max) const;
  MaceStatus ExpectBlobs(int min, int max) const;
  int num_blobs() const {
    return blobs_ == nullptr ? 0 : static_cast<int>(blobs_->size());
  }
  const CaffeBlob &blob(int i) const { return (*blobs_)[i]; }
  // Errors unless blob i holds `count` values (any shape of that size).
  MaceStatus ExpectBlobCount(int i, int64_t count,
                             const std::string &role) const;

  // The layer's `<name>` parameter block (empty when absent).
  MaceStatus Param(const std::string &name, const TextMessage **param) const;
  // The description used in parameter errors.
  std::string What() const {
    return "layer '" + def_.name + "' (" + def_.type + ")";
  }

  template <typename... Pieces>
  MaceStatus Unsupported(const Pieces &...pieces) const {
    return mace::Unsupported(What(), ": ", pieces...);
  }
  template <typename... Pieces>
  MaceStatus InvalidArgs(const Pieces &...pieces) const {
    return mace::InvalidArgs(What(), ": ", pieces...);
  }

 private:
  const CaffeLayerDef &def_;
  const std::vector<CaffeBlob> *blobs_;
  std::vector<std::string> bottoms_;
  std::vector<std::string> tops_;
};

class CaffeContext {
 public:
  explicit CaffeContext(GraphBuilder *graph) : graph_(graph) {}

  GraphBuilder *graph() { return graph_; }
  const Shape &ShapeOf(const std::string &name) const {
    static const Shape kNoShape;
    const Tensor *tensor = graph_->Find(name);
    return tensor != nullptr ? tensor->shape() : kNoShape;
  }
  int RankOf(const std::string &name) const {
    return static_cast<int>(ShapeOf(name).size());
  }
  std::string Temp(const std::string &base) { return graph_->UniqueName(base); }
  MaceStatus Emit(const std::string &type, const std::string &name,
                  const std::vector<std::string> &inputs,
                  const std::vector<std::string> &outputs,
                  const std::vector<OpArg> &args = {}) {
    return graph_->AddOp(type, name, inputs, outputs, args);
  }
  // A constant named after `base`; returns its name.
  std::string Constant(const std::string &base, const Shape &shape,
                       const std::vector<float> &values);
  MaceStatus Transpose(const std::string &name, const std::string &input,
                       const std::vector<int64_t> &perm, std::string *output);
  // Channel-second (NCHW-like, rank >= 3) → channel last; rank <= 2 tensors
  // are channel last already and returned as they are.
  MaceStatus ToChannelLast(const std::string &name, const std::string &input,
                           std::string *output);
  // The inverse, written to `output` (an Identity for rank <= 2).
  MaceStatus FromChannelLast(const std::string &name, const std::string &input,
                             const std::string &output);
  // Runs channel-last op `type` on x (plus `extra` inputs) and writes the
  // channel-second result to `output`.
  MaceStatus EmitChannelLast(const std::string &name, const std::string &type,
                             const std::string &x,
                             const std::vector<std::string> &extra,
                             const std::vector<OpArg> &args,
                             const std::string &output);

 private:
  GraphBuilder *graph_;
};

using CaffeLowering = MaceStatus (*)(const CaffeLayer &layer,
                                     CaffeContext *context);
using CaffeLoweringTable = std::map<std::string, CaffeLowering>;
// Lowerings by V2 layer type. Each family file adds its own.
const CaffeLoweringTable &CaffeLowerings();

void RegisterCaffeConvLayers(CaffeLoweringTable *table);
void RegisterCaffeBasicLayers(CaffeLoweringTable *table);
void RegisterCaffeShapeLayers(CaffeLoweringTable *table);
void RegisterCaffeDetectionLayers(CaffeLoweringTable *table);

// BatchNorm directly followed by the Scale that consumes its top: lowered
// together as one per-channel affine op (the frontend pairs them).
MaceStatus LowerCaffeBatchNormScale(const CaffeLayer &batch_norm,
                                    const CaffeLayer *scale,
                                    CaffeContext *context);

}  // namespace converter
}  // namespace mace

#endif  // MACE_CONVERTER_CAFFE_CAFFE_LOWERING_H_
