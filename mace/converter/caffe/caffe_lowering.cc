#include "mace/converter/caffe/caffe_lowering.h"

#include "mace/converter/common/frontend.h"

namespace mace {
namespace converter {
namespace {

MaceStatus ExpectCount(const CaffeLayer &layer, const char *what, int count,
                       int min, int max) {
  if (count >= min && count <= max) return MaceStatus::MACE_SUCCESS;
  if (min == max) {
    return layer.InvalidArgs("expects ", min, " ", what, ", got ", count);
  }
  return layer.InvalidArgs("expects ", min, " to ", max, " ", what, ", got ",
                           count);
}

}  // namespace

MaceStatus CaffeLayer::ExpectBottoms(int min, int max) const {
  return ExpectCount(*this, "bottoms", num_bottoms(), min, max);
}
MaceStatus CaffeLayer::ExpectTops(int min, int max) const {
  return ExpectCount(*this, "tops", num_tops(), min, max);
}
MaceStatus CaffeLayer::ExpectBlobs(int min, int max) const {
  if (num_blobs() == 0 && min > 0) {
    return InvalidArgs("has no blobs in the .caffemodel (expected ", min,
                       min == max ? "" : " or more", ")");
  }
  return ExpectCount(*this, "blobs in the .caffemodel", num_blobs(), min, max);
}

MaceStatus CaffeLayer::ExpectBlobCount(int i, int64_t count,
                                       const std::string &role) const {
  const CaffeBlob &b = blob(i);
  if (static_cast<int64_t>(b.values.size()) != count) {
    return InvalidArgs("blob ", i, " (", role, ") has shape ",
                       ShapeToString(b.shape), " (", b.values.size(),
                       " values), expected ", count, " values");
  }
  return MaceStatus::MACE_SUCCESS;
}

MaceStatus CaffeLayer::Param(const std::string &name,
                             const TextMessage **param) const {
  return def_.params->GetMessage(What(), name, param);
}

std::string CaffeContext::Constant(const std::string &base, const Shape &shape,
                                   const std::vector<float> &values) {
  const std::string name = Temp(base);
  graph_->AddConstant(name, shape, values);
  return name;
}

MaceStatus CaffeContext::Transpose(const std::string &name,
                                   const std::string &input,
                                   const std::vector<int64_t> &perm,
                                   std::string *output) {
  *output = Temp(input + "__t");
  return Emit("Transpose", Temp(name + "__transpose"), {input}, {*output},
              {OpArg::Ints("dims", perm)});
}

MaceStatus CaffeContext::ToChannelLast(const std::string &name,
                                       const std::string &input,
                                       std::string *output) {
  const int rank = RankOf(input);
  if (rank <= 2) {
    *output = input;
    return MaceStatus::MACE_SUCCESS;
  }
  return Transpose(name, input, ChannelLastPerm(rank), output);
}

MaceStatus CaffeContext::FromChannelLast(const std::string &name,
                                         const std::string &input,
                                         const std::string &output) {
  const int rank = RankOf(input);
  if (rank <= 2) {
    return Emit("Identity", Temp(name + "__identity"), {input}, {output});
  }
  return Emit("Transpose", Temp(name + "__transpose_back"), {input}, {output},
              {OpArg::Ints("dims", ChannelSecondPerm(rank))});
}

MaceStatus CaffeContext::EmitChannelLast(const std::string &name,
                                         const std::string &type,
                                         const std::string &x,
                                         const std::vector<std::string> &extra,
                                         const std::vector<OpArg> &args,
                                         const std::string &output) {
  std::string x_last;
  MACE_RETURN_IF_ERROR(ToChannelLast(name, x, &x_last));
  std::vector<std::string> inputs{x_last};
  inputs.insert(inputs.end(), extra.begin(), extra.end());
  if (RankOf(x) <= 2) return Emit(type, name, inputs, {output}, args);
  const std::string y_last = Temp(output + "__nhwc");
  MACE_RETURN_IF_ERROR(Emit(type, name, inputs, {y_last}, args));
  return FromChannelLast(name, y_last, output);
}

const CaffeLoweringTable &CaffeLowerings() {
  static const CaffeLoweringTable table = [] {
    CaffeLoweringTable t;
    RegisterCaffeConvLayers(&t);
    RegisterCaffeBasicLayers(&t);
    RegisterCaffeShapeLayers(&t);
    RegisterCaffeDetectionLayers(&t);
    return t;
  }();
  return table;
}

}  // namespace converter
}  // namespace mace
