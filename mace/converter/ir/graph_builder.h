// The converter IR: a MACE op graph under construction, with every tensor's
// type and shape known and every constant's data at hand.
//
// Frontends emit ops one at a time with AddOp. Each op's shapes come from
// the runtime op's own Prepare (one definition of each op's semantics), and
// an op whose inputs are all constant is run at once and replaced by its
// outputs as constants; so shape-computing chains (Shape → Gather → Concat
// → Reshape) fold while the graph is built. Passes (mace/converter/passes)
// then rewrite the op list; Finish writes the model.

#ifndef MACE_CONVERTER_IR_GRAPH_BUILDER_H_
#define MACE_CONVERTER_IR_GRAPH_BUILDER_H_

#include <cstdint>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "mace/core/tensor.h"
#include "mace/core/thread_pool.h"
#include "mace/model/mace.pb.h"
#include "mace/model/model_builder.h"
#include "mace/public/mace.h"

namespace mace {
namespace converter {

// One argument of an op to emit.
struct OpArg {
  static OpArg Int(const std::string &name, int64_t value);
  static OpArg Float(const std::string &name, float value);
  static OpArg String(const std::string &name, const std::string &value);
  static OpArg Ints(const std::string &name, const std::vector<int64_t> &values);
  static OpArg Floats(const std::string &name, const std::vector<float> &values);
  Argument proto;
};

class GraphBuilder {
 public:
  GraphBuilder();
  ~GraphBuilder();
  GraphBuilder(const GraphBuilder &) = delete;
  GraphBuilder &operator=(const GraphBuilder &) = delete;

  // Graph inputs and outputs; data_format as in the proto (0 NONE, 1 NHWC,
  // 2 NCHW): the layout the user feeds and receives.
  MaceStatus AddInput(const std::string &name, DataType dtype,
                      const Shape &shape, int data_format);
  MaceStatus AddOutput(const std::string &name, int data_format);

  void AddConstant(const std::string &name, const Shape &shape,
                   const std::vector<float> &values);
  void AddConstantInt(const std::string &name, const Shape &shape,
                      const std::vector<int32_t> &values);

  // Emits one op (folded to constants when every input is constant).
  // Errors name the op.
  MaceStatus AddOp(const std::string &type, const std::string &name,
                   const std::vector<std::string> &inputs,
                   const std::vector<std::string> &outputs,
                   const std::vector<OpArg> &args = {});

  bool Has(const std::string &name) const;
  // nullptr when unknown.
  const Tensor *Find(const std::string &name) const;
  bool IsConstant(const std::string &name) const;
  // A name not used by any tensor or op yet, derived from `base`.
  std::string UniqueName(const std::string &base);

  // The ops emitted so far, in order; passes edit them in place and call
  // Reinfer for ops whose inputs they changed.
  std::vector<OperatorDef> *mutable_ops() { return &ops_; }
  const std::vector<OperatorDef> &ops() const { return ops_; }
  // Re-runs shape inference for ops_[index] (after a pass rewired it).
  MaceStatus Reinfer(size_t index);
  // Replaces a tensor's value by a new constant (passes that fold weights).
  void SetConstant(const std::string &name, const Shape &shape,
                   const std::vector<float> &values);

  const std::vector<std::string> &output_names() const { return outputs_; }
  bool IsGraphOutput(const std::string &name) const;
  bool IsGraphInput(const std::string &name) const;

  // Drops ops and constants nothing needs, and writes the model.
  MaceStatus Finish(const std::string &model_name, ModelBuilder *model);

 private:
  MaceStatus Infer(const OperatorDef &def, bool fold, bool *folded);
  Tensor *NewTensor(const std::string &name);

  std::unique_ptr<ThreadPool> thread_pool_;
  std::map<std::string, std::unique_ptr<Tensor>> tensors_;
  std::map<std::string, int> input_formats_;
  std::vector<std::string> inputs_;
  std::vector<std::string> outputs_;
  std::map<std::string, int> output_formats_;
  std::vector<OperatorDef> ops_;
  std::set<std::string> op_names_;
  int unique_counter_ = 0;
};

}  // namespace converter
}  // namespace mace

#endif  // MACE_CONVERTER_IR_GRAPH_BUILDER_H_
