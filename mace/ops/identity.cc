// Identity: output 0 is input 0 (same bytes, dtype and shape); Run does
// nothing.

#include "mace/ops/op_registry.h"

namespace mace {
namespace {

class IdentityOp : public Operation {
 public:
  MaceStatus Prepare(OpContext *context) override {
    MACE_RETURN_IF_ERROR(context->ExpectInputCount(1, 1));
    MACE_RETURN_IF_ERROR(context->ExpectOutputCount(1));
    const Tensor &input = context->input(0);
    Tensor *output = context->output(0);
    output->set_dtype(input.dtype());
    output->set_shape(input.shape());
    return MaceStatus::MACE_SUCCESS;
  }

  MaceStatus Run(OpContext *context) override {
    return MaceStatus::MACE_SUCCESS;
  }

  OutputMemory output_memory() const override {
    return OutputMemory::kAliasInput0;
  }
};

}  // namespace

void RegisterIdentity(OpRegistry *registry) {
  registry->Register<IdentityOp>("Identity");
}

}  // namespace mace
