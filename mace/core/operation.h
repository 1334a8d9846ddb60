// The interface every op implements, and the context it sees.
//
// Life of an op inside an engine:
//   1. created by the registry from its type name (mace/ops/op_registry.cc);
//   2. Prepare(): once at init. Reads and checks arguments, checks input
//      ranks, shapes and types, sets each output's dtype and shape. Inputs
//      have shapes; constant inputs (weights, folded shape tensors) also have
//      data. May ask for scratch memory and precompute (pack weights).
//   3. Run(): every inference. Inputs and outputs have data; allocates
//      nothing, returns an error only for conditions that depend on input
//      values (an index out of range, say).
// Ops whose inputs are all constant are run once at init and dropped from
// the run plan (constant folding), so shape-computing chains cost nothing.

#ifndef MACE_CORE_OPERATION_H_
#define MACE_CORE_OPERATION_H_

#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "mace/core/deferred_work.h"
#include "mace/core/op_args.h"
#include "mace/core/packed_weight_source.h"
#include "mace/core/status.h"
#include "mace/core/tensor.h"
#include "mace/core/thread_pool.h"
#include "mace/model/mace.pb.h"

namespace mace {

// How an op's outputs relate to its inputs' memory.
enum class OutputMemory {
  kOwn,         // outputs get their own buffers
  kMayReuseInput0,  // output 0 may overwrite input 0 (same size, elementwise)
  kAliasInput0,     // output 0 is input 0's bytes (reshape-like, Run no-op)
  // Output 0 may overwrite the last input (same size): each of its
  // elements is read before the same element of the output is written (a
  // residual addend added in the GEMM's registers). Saves the output's own
  // stream through memory: ResNet-50's residual 1x1 convolutions ran 5-9%
  // faster in place.
  kMayReuseLastInput,
};

class OpContext {
 public:
  OpContext(const OperatorDef &def, std::vector<Tensor *> inputs,
            std::vector<Tensor *> outputs, ThreadPool *thread_pool)
      : def_(def), args_(def), inputs_(std::move(inputs)),
        outputs_(std::move(outputs)), thread_pool_(thread_pool) {}

  const OperatorDef &def() const { return def_; }
  const OpArgs &args() const { return args_; }
  const std::string &name() const { return def_.name(); }
  const std::string &type() const { return def_.type(); }

  int num_inputs() const { return static_cast<int>(inputs_.size()); }
  int num_outputs() const { return static_cast<int>(outputs_.size()); }
  const Tensor &input(int i) const { return *inputs_[i]; }
  Tensor *output(int i) { return outputs_[i]; }
  const Tensor &output(int i) const { return *outputs_[i]; }
  ThreadPool *thread_pool() const { return thread_pool_; }

  // False when the op is prepared only for its output shapes and will not
  // run (the converter's shape inference): Prepare may then skip work only
  // Run needs, such as packing weights.
  bool will_run() const { return will_run_; }
  void set_will_run(bool will_run) { will_run_ = will_run; }

  // Where Prepare puts the arrays it packs from constant weights: the
  // engine's arena, or its cache file, from which the arrays may come back
  // already packed (mace/core/packed_weight_source.h). Null outside an
  // engine (the op then allocates its own).
  PackedWeightSource *packed_weights() const { return packed_weights_.get(); }
  void set_packed_weights(std::unique_ptr<PackedWeightSource> source) {
    packed_weights_ = std::move(source);
  }

  // Where Prepare may leave its packing to be done with the other ops'
  // (Net runs it before any op runs); null: pack at once.
  DeferredWork *deferred_work() const { return deferred_work_; }
  void set_deferred_work(DeferredWork *work) { deferred_work_ = work; }

  // In-place concatenation (planned by Net, see Operation::
  // JoinsInputsAlongLastAxis): output 0's rows along its last dim lie
  // output_row_stride() floats apart (0: packed, the dim itself), inside
  // the joined tensor; and input i of a joining op was written straight
  // into its output by its producer (input_in_place), so Run skips it.
  int64_t output_row_stride() const { return output_row_stride_; }
  void set_output_row_stride(int64_t stride) { output_row_stride_ = stride; }
  bool input_in_place(int i) const {
    return i < static_cast<int>(inputs_in_place_.size()) && inputs_in_place_[i];
  }
  void set_input_in_place(int i) {
    inputs_in_place_.resize(inputs_.size(), false);
    inputs_in_place_[i] = true;
  }

  // In-place split (planned by Net, see Operation::WritesOutputSlices):
  // when output_slices() is not empty, Run writes columns [begin, end) of
  // output 0's last axis into each slice's tensor, its rows row_stride
  // elements apart, and output 0 itself is not written. An op whose output
  // its input's producer writes that way is not run at all
  // (written_by_producer).
  struct OutputSlice {
    int64_t begin;
    int64_t end;
    Tensor *tensor;
    int64_t row_stride;
  };
  const std::vector<OutputSlice> &output_slices() const {
    return output_slices_;
  }
  void add_output_slice(const OutputSlice &slice) {
    output_slices_.push_back(slice);
  }
  bool written_by_producer() const { return written_by_producer_; }
  void set_written_by_producer() { written_by_producer_ = true; }

  // Scratch memory: requested in Prepare, valid during Run (arena memory
  // shared with other ops' scratch, contents not kept between runs).
  void RequestScratch(int64_t bytes) {
    if (bytes > scratch_bytes_) scratch_bytes_ = bytes;
  }
  int64_t scratch_bytes() const { return scratch_bytes_; }
  void BindScratch(void *scratch) { scratch_ = scratch; }
  template <typename T>
  T *scratch() const {
    return static_cast<T *>(scratch_);
  }

  // Error helpers whose messages start with the op's name and type.
  template <typename... Pieces>
  MaceStatus InvalidArgs(const Pieces &...pieces) const {
    return mace::InvalidArgs("op '", name(), "' (", type(), "): ", pieces...);
  }
  template <typename... Pieces>
  MaceStatus Unsupported(const Pieces &...pieces) const {
    return mace::Unsupported("op '", name(), "' (", type(), "): ", pieces...);
  }
  template <typename... Pieces>
  MaceStatus OutOfResources(const Pieces &...pieces) const {
    return mace::OutOfResources("op '", name(), "' (", type(), "): ",
                                pieces...);
  }
  template <typename... Pieces>
  MaceStatus RuntimeError(const Pieces &...pieces) const {
    return mace::RuntimeError("op '", name(), "' (", type(), "): ",
                              pieces...);
  }

  // Common checks, each returning an error that names the op and input.
  MaceStatus ExpectInputCount(int min_count, int max_count) const;
  MaceStatus ExpectOutputCount(int count) const;
  MaceStatus ExpectRank(int input_index, int rank) const;
  MaceStatus ExpectDtype(int input_index, DataType dtype) const;
  MaceStatus ExpectConstant(int input_index) const;

 private:
  const OperatorDef &def_;
  OpArgs args_;
  std::vector<Tensor *> inputs_;
  std::vector<Tensor *> outputs_;
  ThreadPool *thread_pool_;
  int64_t scratch_bytes_ = 0;
  void *scratch_ = nullptr;
  bool will_run_ = true;
  int64_t output_row_stride_ = 0;
  std::vector<bool> inputs_in_place_;
  std::vector<OutputSlice> output_slices_;
  bool written_by_producer_ = false;
  DeferredWork *deferred_work_ = nullptr;
  std::unique_ptr<PackedWeightSource> packed_weights_;
};

class Operation {
 public:
  virtual ~Operation() = default;

  virtual MaceStatus Prepare(OpContext *context) = 0;
  virtual MaceStatus Run(OpContext *context) = 0;

  virtual OutputMemory output_memory() const { return OutputMemory::kOwn; }
  // In-place concatenation: an op whose output 0 is its inputs joined
  // along their last axis (after Prepare) lets Net have the producers of
  // those inputs that WritesStridedOutput write straight into its output,
  // each at its offset along that axis; its Run then copies only the
  // other inputs (OpContext::input_in_place). Saves a pass over the
  // joined tensor: SqueezeNet's Concats were 5% of the model.
  virtual bool JoinsInputsAlongLastAxis() const { return false; }
  // Whether Run honours OpContext::output_row_stride() for output 0.
  virtual bool WritesStridedOutput() const { return false; }
  // In-place split, the mirror of the join: an op whose output `output`
  // is the range [*begin, *end) of its one input's last axis, every other
  // dim whole (a channel Slice; each output of a channel Split), says so
  // after Prepare; when every output of every reader of a tensor does and
  // the tensor's producer WritesOutputSlices, Net has the producer write
  // each range straight into its reader's output and skips the readers.
  // ShuffleNet's ChannelShuffle and the two Slices (or the Split) after it
  // were then one pass over the tensor instead of two.
  virtual bool TakesLastAxisRange(int output, int64_t *begin,
                                  int64_t *end) const {
    return false;
  }
  // Whether Run honours OpContext::output_slices() for output 0.
  virtual bool WritesOutputSlices() const { return false; }
  // Multiply-accumulates of one run (for benchmarks); valid after Prepare.
  virtual int64_t MacCount(const OpContext &context) const { return 0; }
  // The input whose shape the per-op report shows as the op's filter (its
  // window's): -1 for none.
  virtual int FilterInput() const { return -1; }
};

}  // namespace mace

#endif  // MACE_CORE_OPERATION_H_
