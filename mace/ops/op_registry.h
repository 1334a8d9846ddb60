// Maps op type names (as in MACE's model files) to op factories. The list
// of families lives in op_registry.cc; each family's file registers its ops.

#ifndef MACE_OPS_OP_REGISTRY_H_
#define MACE_OPS_OP_REGISTRY_H_

#include <map>
#include <memory>
#include <string>
#include <vector>

#include "mace/core/operation.h"

namespace mace {

class OpRegistry {
 public:
  using Factory = std::unique_ptr<Operation> (*)();

  // The registry with every op of this build.
  static const OpRegistry &Global();

  template <typename OpClass>
  void Register(const std::string &type) {
    factories_[type] = [] {
      return std::unique_ptr<Operation>(new OpClass());
    };
  }

  // nullptr when the type is unknown.
  std::unique_ptr<Operation> Create(const std::string &type) const;
  bool Has(const std::string &type) const;
  std::vector<std::string> Types() const;

 private:
  std::map<std::string, Factory> factories_;
};

// One registration function per op family file.
void RegisterActivation(OpRegistry *registry);
void RegisterArgMax(OpRegistry *registry);
void RegisterBatchNorm(OpRegistry *registry);
void RegisterBiasAdd(OpRegistry *registry);
void RegisterCast(OpRegistry *registry);
void RegisterChannelShuffle(OpRegistry *registry);
void RegisterConcat(OpRegistry *registry);
void RegisterConv2D(OpRegistry *registry);
void RegisterCrop(OpRegistry *registry);
void RegisterDeconv2D(OpRegistry *registry);
void RegisterDepthToSpace(OpRegistry *registry);
void RegisterDepthwiseConv2d(OpRegistry *registry);
void RegisterEltwise(OpRegistry *registry);
void RegisterFill(OpRegistry *registry);
void RegisterFullyConnected(OpRegistry *registry);
void RegisterGather(OpRegistry *registry);
void RegisterIdentity(OpRegistry *registry);
void RegisterInstanceNorm(OpRegistry *registry);
void RegisterLayerNorm(OpRegistry *registry);
void RegisterLocalResponseNorm(OpRegistry *registry);
void RegisterMatMul(OpRegistry *registry);
void RegisterPad(OpRegistry *registry);
void RegisterPointwiseDepthwiseConv2d(OpRegistry *registry);
void RegisterPooling(OpRegistry *registry);
void RegisterProposal(OpRegistry *registry);
void RegisterPSROIAlign(OpRegistry *registry);
void RegisterQuantize(OpRegistry *registry);
void RegisterReduce(OpRegistry *registry);
void RegisterReshape(OpRegistry *registry);
void RegisterResize(OpRegistry *registry);
void RegisterReverse(OpRegistry *registry);
void RegisterShape(OpRegistry *registry);
void RegisterSlice(OpRegistry *registry);
void RegisterSoftmax(OpRegistry *registry);
void RegisterSpaceToBatch(OpRegistry *registry);
void RegisterSplit(OpRegistry *registry);
void RegisterStack(OpRegistry *registry);
void RegisterTranspose(OpRegistry *registry);
void RegisterSsdDetection(OpRegistry *registry);

}  // namespace mace

#endif  // MACE_OPS_OP_REGISTRY_H_
