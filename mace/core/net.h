// A model prepared for running: ops in order with their tensors, constants
// folded, a memory plan for every intermediate buffer. Built once at init;
// Run walks the steps and allocates nothing.

#ifndef MACE_CORE_NET_H_
#define MACE_CORE_NET_H_

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "mace/core/deferred_work.h"
#include "mace/core/memory_planner.h"
#include "mace/core/operation.h"
#include "mace/core/packed_weight_source.h"
#include "mace/core/tensor.h"
#include "mace/core/thread_pool.h"
#include "mace/model/mace.pb.h"
#include "mace/public/mace.h"

namespace mace {

class Net {
 public:
  using OpFactory =
      std::function<std::unique_ptr<Operation>(const std::string &type)>;

  Net() = default;
  Net(const Net &) = delete;
  Net &operator=(const Net &) = delete;

  // Validates `net`, loads its weights (borrowing fp32 data from `weights`
  // where possible: *weights_borrowed tells), prepares the ops needed for
  // `output_names` (all declared outputs when empty) and plans memory.
  // `input_names` empty means every declared input. Ops put the arrays
  // they pack in `packed_weights` when given (an engine's arena, or a
  // cache file's, which may hold them already), in memory of their own
  // otherwise.
  MaceStatus Init(NetDef net, const unsigned char *weights,
                  int64_t weights_size,
                  const std::vector<std::string> &input_names,
                  const std::vector<std::string> &output_names,
                  const OpFactory &op_factory, ThreadPool *thread_pool,
                  bool *weights_borrowed,
                  PackedWeightStore *packed_weights = nullptr);

  // Bytes of arena the plan needs (intermediates and scratch).
  int64_t arena_bytes() const { return plan_.arena_bytes; }
  // Points every planned buffer into `arena` (at least arena_bytes()).
  void BindArena(uint8_t *arena);

  // Model inputs to be bound by the caller before each Run, and outputs to
  // read after it; the data format declared for each in the model.
  const std::vector<std::string> &input_names() const { return inputs_; }
  const std::vector<std::string> &output_names() const { return outputs_; }
  Tensor *input(const std::string &name);
  const Tensor *output(const std::string &name) const;
  int input_data_format(const std::string &name) const;
  int output_data_format(const std::string &name) const;

  MaceStatus Run(RunMetadata *run_metadata);

  // Where Init's time went, for the load's diagnostics (VLOG 1).
  struct InitTimes {
    int64_t validate_micros = 0;  // checks, constant tensors, inputs
    int64_t prepare_micros = 0;   // the ops' Prepare, packing included
    int64_t packing_micros = 0;   // of which the deferred packing loop
    int64_t plan_micros = 0;      // in-place joins and splits, buffers
  };
  const InitTimes &init_times() const { return init_times_; }

  int num_steps() const { return static_cast<int>(steps_.size()); }
  // Inputs of joining ops (Concat along the last axis) that their
  // producers write straight into the joined tensor.
  int inputs_written_in_place() const {
    return static_cast<int>(written_in_place_.size());
  }
  // Ops not run because their input's producer writes their output
  // (channel Slices after a ChannelShuffle, see PlanInPlaceSplits).
  int outputs_sliced_in_place() const {
    return static_cast<int>(sliced_at_.size());
  }

 private:
  struct Step {
    std::unique_ptr<Operation> op;
    std::unique_ptr<OpContext> context;
    OperatorStats stats;
  };
  struct Placement {
    Tensor *tensor;  // nullptr for an op's scratch
    int step;
    int buffer;
    int64_t offset;  // bytes into the buffer
  };
  // Where a producer writes a joining op's input: inside its output.
  struct InPlaceInput {
    const Tensor *whole;
    int64_t offset;  // bytes
  };

  MaceStatus LoadTensors(const unsigned char *weights, int64_t weights_size,
                         bool *weights_borrowed);
  MaceStatus ResolveIo(const std::vector<std::string> &input_names,
                       const std::vector<std::string> &output_names);
  std::vector<int> NeededOps() const;
  MaceStatus PrepareOps(const std::vector<int> &ops,
                        const OpFactory &op_factory, ThreadPool *thread_pool,
                        PackedWeightStore *packed_weights);
  // Maps the packed arrays' memory, then runs the ops' deferred packing,
  // adding the time to init_times_.
  void RunPacking(DeferredWork *packing, ThreadPool *thread_pool,
                  PackedWeightStore *packed_weights);
  MaceStatus FoldConstantStep(Step *step);
  // The tensors the engine hands back after Run (never overwritten early,
  // never written only into other tensors).
  std::unordered_set<const Tensor *> GraphOutputTensors() const;
  void PlanInPlaceJoins();
  void PlanInPlaceSplits();
  void PlanBuffers();
  static OperatorStats DescribeStep(const Step &step);

  NetDef net_;
  std::map<std::string, std::unique_ptr<Tensor>> tensors_;
  std::map<std::string, int> input_formats_;
  std::map<std::string, int> output_formats_;
  std::vector<std::string> inputs_;
  std::vector<std::string> outputs_;
  std::vector<Step> steps_;
  std::vector<Placement> placements_;
  std::unordered_map<const Tensor *, InPlaceInput> written_in_place_;
  // Outputs of skipped Slices -> the step of the producer that writes them.
  std::unordered_map<const Tensor *, int> sliced_at_;
  MemoryPlan plan_;
  InitTimes init_times_;
};

}  // namespace mace

#endif  // MACE_CORE_NET_H_
