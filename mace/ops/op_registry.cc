#include "mace/ops/op_registry.h"

namespace mace {
namespace {

OpRegistry BuildRegistry() {
  OpRegistry registry;
  RegisterActivation(&registry);
  RegisterArgMax(&registry);
  RegisterBatchNorm(&registry);
  RegisterBiasAdd(&registry);
  RegisterCast(&registry);
  RegisterChannelShuffle(&registry);
  RegisterConcat(&registry);
  RegisterConv2D(&registry);
  RegisterCrop(&registry);
  RegisterDeconv2D(&registry);
  RegisterDepthToSpace(&registry);
  RegisterDepthwiseConv2d(&registry);
  RegisterEltwise(&registry);
  RegisterFill(&registry);
  RegisterFullyConnected(&registry);
  RegisterGather(&registry);
  RegisterIdentity(&registry);
  RegisterInstanceNorm(&registry);
  RegisterLayerNorm(&registry);
  RegisterLocalResponseNorm(&registry);
  RegisterMatMul(&registry);
  RegisterPad(&registry);
  RegisterPointwiseDepthwiseConv2d(&registry);
  RegisterPooling(&registry);
  RegisterProposal(&registry);
  RegisterPSROIAlign(&registry);
  RegisterQuantize(&registry);
  RegisterReduce(&registry);
  RegisterReshape(&registry);
  RegisterResize(&registry);
  RegisterReverse(&registry);
  RegisterShape(&registry);
  RegisterSlice(&registry);
  RegisterSoftmax(&registry);
  RegisterSpaceToBatch(&registry);
  RegisterSplit(&registry);
  RegisterStack(&registry);
  RegisterTranspose(&registry);
  RegisterSsdDetection(&registry);
  return registry;
}

}  // namespace

const OpRegistry &OpRegistry::Global() {
  static const OpRegistry *registry = new OpRegistry(BuildRegistry());
  return *registry;
}

std::unique_ptr<Operation> OpRegistry::Create(const std::string &type) const {
  auto it = factories_.find(type);
  return it == factories_.end() ? nullptr : it->second();
}

bool OpRegistry::Has(const std::string &type) const {
  return factories_.count(type) > 0;
}

std::vector<std::string> OpRegistry::Types() const {
  std::vector<std::string> types;
  for (const auto &entry : factories_) types.push_back(entry.first);
  return types;
}

}  // namespace mace
