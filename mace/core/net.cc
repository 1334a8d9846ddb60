#include "mace/core/net.h"

#include <algorithm>
#include <chrono>
#include <set>
#include <unordered_map>
#include <unordered_set>

#include "mace/core/logging.h"
#include "mace/core/status.h"
#include "mace/model/model_loader.h"

namespace mace {
namespace {

int64_t NowMicros() {
  return std::chrono::duration_cast<std::chrono::microseconds>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

std::vector<int> IntsArg(const OperatorDef &def, const char *name) {
  for (const Argument &arg : def.arg()) {
    if (arg.name() == name) return {arg.ints().begin(), arg.ints().end()};
  }
  return {};
}

// Appends to *slices the range of `whole`'s last axis that each output of
// `op` (reading `whole` alone) takes; false when an output is no such
// range. An empty output needs no write and gets no slice; only output 0
// may lie inside a joined tensor (a row stride).
bool AppendRangesTaken(const Operation &op, OpContext *context,
                       const Tensor &whole,
                       std::vector<OpContext::OutputSlice> *slices) {
  if (context->num_inputs() != 1) return false;
  for (int o = 0; o < context->num_outputs(); ++o) {
    int64_t begin = 0, end = 0;
    if (!op.TakesLastAxisRange(o, &begin, &end) ||
        context->output(o)->dtype() != whole.dtype()) {
      return false;
    }
    const int64_t stride = o == 0 ? context->output_row_stride() : 0;
    if (end > begin) {
      slices->push_back(OpContext::OutputSlice{
          begin, end, context->output(o), stride > 0 ? stride : end - begin});
    }
  }
  return true;
}

// The input whose buffer `memory` lets output 0 take over, or -1.
int ReusableInput(const OpContext &context, OutputMemory memory) {
  if (context.num_inputs() == 0) return -1;
  switch (memory) {
    case OutputMemory::kMayReuseInput0:
      return 0;
    case OutputMemory::kMayReuseLastInput:
      return context.num_inputs() - 1;
    default:
      return -1;
  }
}

}  // namespace

MaceStatus Net::Init(NetDef net, const unsigned char *weights,
                     int64_t weights_size,
                     const std::vector<std::string> &input_names,
                     const std::vector<std::string> &output_names,
                     const OpFactory &op_factory, ThreadPool *thread_pool,
                     bool *weights_borrowed,
                     PackedWeightStore *packed_weights) {
  net_ = std::move(net);
  if (weights == nullptr) weights_size = 0;
  auto is_known = [&op_factory](const std::string &type) {
    return op_factory(type) != nullptr;
  };
  int64_t start = NowMicros();
  auto lap = [&start](int64_t *micros) {
    const int64_t now = NowMicros();
    *micros = now - start;
    start = now;
  };
  MACE_RETURN_IF_ERROR(ValidateModel(&net_, weights_size, is_known));
  MACE_RETURN_IF_ERROR(LoadTensors(weights, weights_size, weights_borrowed));
  MACE_RETURN_IF_ERROR(ResolveIo(input_names, output_names));
  lap(&init_times_.validate_micros);
  MACE_RETURN_IF_ERROR(
      PrepareOps(NeededOps(), op_factory, thread_pool, packed_weights));
  lap(&init_times_.prepare_micros);
  PlanInPlaceJoins();
  PlanInPlaceSplits();  // after the joins: reads their row strides
  PlanBuffers();
  lap(&init_times_.plan_micros);
  VLOG(1) << "net '" << net_.name() << "': " << steps_.size()
          << " steps, arena " << plan_.arena_bytes << " bytes";
  return MaceStatus::MACE_SUCCESS;
}

MaceStatus Net::LoadTensors(const unsigned char *weights, int64_t weights_size,
                            bool *weights_borrowed) {
  bool any_borrowed = false;
  for (const ConstTensor &proto : net_.tensors()) {
    auto tensor = std::make_unique<Tensor>();
    bool borrowed = false;
    MACE_RETURN_IF_ERROR(LoadConstTensor(proto, net_, weights, weights_size,
                                         tensor.get(), &borrowed));
    any_borrowed = any_borrowed || borrowed;
    tensors_[proto.name()] = std::move(tensor);
  }
  for (const InputOutputInfo &info : net_.input_info()) {
    tensors_[info.name()] =
        std::make_unique<Tensor>(info.name(), info.data_type(),
                                 Shape(info.dims().begin(), info.dims().end()));
    input_formats_[info.name()] = info.data_format();
  }
  if (weights_borrowed != nullptr) *weights_borrowed = any_borrowed;
  return MaceStatus::MACE_SUCCESS;
}

MaceStatus Net::ResolveIo(const std::vector<std::string> &input_names,
                          const std::vector<std::string> &output_names) {
  for (const std::string &name : input_names) {
    if (!input_formats_.count(name)) {
      std::string declared;
      for (const auto &entry : input_formats_) {
        declared += (declared.empty() ? "" : ", ") + entry.first;
      }
      return InvalidArgs("input '", name, "' is not an input of the model ",
                         "(model inputs: ", declared, ")");
    }
  }
  if (input_names.empty()) {
    for (const InputOutputInfo &info : net_.input_info()) {
      inputs_.push_back(info.name());
    }
  } else {
    inputs_ = input_names;
  }
  std::set<std::string> produced;
  for (const OperatorDef &op : net_.op()) {
    produced.insert(op.output().begin(), op.output().end());
  }
  for (const InputOutputInfo &info : net_.output_info()) {
    output_formats_[info.name()] = info.data_format();
  }
  if (output_names.empty()) {
    for (const InputOutputInfo &info : net_.output_info()) {
      outputs_.push_back(info.name());
    }
  } else {
    outputs_ = output_names;
  }
  if (outputs_.empty()) {
    return InvalidArgs("the model declares no outputs and none were asked");
  }
  for (const std::string &name : outputs_) {
    if (!produced.count(name) && !tensors_.count(name)) {
      return InvalidArgs("output '", name,
                         "' is not produced by any op of the model");
    }
    output_formats_.emplace(name, 0);
  }
  return MaceStatus::MACE_SUCCESS;
}

std::vector<int> Net::NeededOps() const {
  std::set<std::string> needed(outputs_.begin(), outputs_.end());
  std::vector<int> ops;
  for (int i = net_.op_size() - 1; i >= 0; --i) {
    const OperatorDef &op = net_.op(i);
    const bool used = std::any_of(
        op.output().begin(), op.output().end(),
        [&needed](const std::string &out) { return needed.count(out) > 0; });
    if (!used) continue;
    ops.push_back(i);
    needed.insert(op.input().begin(), op.input().end());
  }
  std::reverse(ops.begin(), ops.end());
  return ops;
}

MaceStatus Net::PrepareOps(const std::vector<int> &ops,
                           const OpFactory &op_factory, ThreadPool *thread_pool,
                           PackedWeightStore *packed_weights) {
  const std::set<std::string> fed(inputs_.begin(), inputs_.end());
  steps_.reserve(steps_.size() + ops.size());
  // The ops' packing, done together once every op is prepared (or before
  // a constant op is folded, which runs it).
  DeferredWork packing;
  for (int index : ops) {
    const OperatorDef &def = net_.op(index);
    // Built only for an error: a small model's load is dominated by such
    // per-op allocations.
    auto label = [&def] {
      return StrCat("op '", def.name(), "' (", def.type(), ")");
    };
    std::vector<Tensor *> inputs;
    bool all_constant = true;
    for (const std::string &name : def.input()) {
      if (input_formats_.count(name) && !fed.count(name)) {
        return InvalidArgs(label(), " needs model input '", name,
                           "', which is not among the engine's inputs");
      }
      Tensor *tensor = tensors_.at(name).get();
      inputs.push_back(tensor);
      all_constant = all_constant && tensor->is_constant();
    }
    std::vector<Tensor *> outputs;
    for (const std::string &name : def.output()) {
      auto tensor = std::make_unique<Tensor>(name, DT_FLOAT, Shape{});
      outputs.push_back(tensor.get());
      tensors_[name] = std::move(tensor);
    }
    Step step;
    step.op = op_factory(def.type());
    if (step.op == nullptr) {
      return Unsupported(label(), ": unknown op type");
    }
    step.context =
        std::make_unique<OpContext>(def, inputs, outputs, thread_pool);
    if (packed_weights != nullptr) {
      step.context->set_packed_weights(packed_weights->SourceFor(index));
    }
    step.context->set_deferred_work(&packing);
    const MaceStatus prepared = step.op->Prepare(step.context.get());
    step.context->set_deferred_work(nullptr);
    MACE_RETURN_IF_ERROR(prepared);
    for (Tensor *output : outputs) {
      if (!HasValidSize(*output)) {
        return InvalidArgs(label(), ": output '", output->name(),
                           "' has invalid shape ",
                           ShapeToString(output->shape()), " or type ",
                           DataTypeName(output->dtype()));
      }
    }
    if (all_constant) {
      RunPacking(&packing, thread_pool, packed_weights);
      MACE_RETURN_IF_ERROR(FoldConstantStep(&step));
      continue;
    }
    step.stats = DescribeStep(step);
    steps_.push_back(std::move(step));
  }
  RunPacking(&packing, thread_pool, packed_weights);
  return MaceStatus::MACE_SUCCESS;
}

void Net::RunPacking(DeferredWork *packing, ThreadPool *thread_pool,
                     PackedWeightStore *packed_weights) {
  const int64_t start = NowMicros();
  if (packed_weights != nullptr) packed_weights->MapHandedOut(thread_pool);
  packing->RunAll(thread_pool);
  init_times_.packing_micros += NowMicros() - start;
}

MaceStatus Net::FoldConstantStep(Step *step) {
  OpContext *context = step->context.get();
  const bool alias = step->op->output_memory() == OutputMemory::kAliasInput0;
  for (int i = 0; i < context->num_outputs(); ++i) {
    Tensor *output = context->output(i);
    if (alias && i == 0) {
      output->BindData(const_cast<void *>(context->input(0).raw_data()));
    } else {
      MACE_RETURN_IF_ERROR(output->AllocateOwned());
    }
  }
  Tensor scratch("scratch", DT_UINT8, {context->scratch_bytes()});
  MACE_RETURN_IF_ERROR(scratch.AllocateOwned());
  context->BindScratch(scratch.raw_mutable_data());
  MACE_RETURN_IF_ERROR(step->op->Run(context));
  context->BindScratch(nullptr);
  for (int i = 0; i < context->num_outputs(); ++i) {
    context->output(i)->set_constant(true);
  }
  return MaceStatus::MACE_SUCCESS;
}

void Net::PlanInPlaceJoins() {
  written_in_place_.clear();
  std::unordered_map<const Tensor *, int> uses;
  std::unordered_map<const Tensor *, int> producer;
  for (int i = 0; i < static_cast<int>(steps_.size()); ++i) {
    const OpContext &context = *steps_[i].context;
    for (int j = 0; j < context.num_inputs(); ++j) ++uses[&context.input(j)];
    if (context.num_outputs() > 0) producer[&context.output(0)] = i;
  }
  for (const std::string &name : outputs_) ++uses[tensors_.at(name).get()];
  for (Step &step : steps_) {
    OpContext *join = step.context.get();
    if (join->num_outputs() == 0) continue;
    const Tensor &whole = *join->output(0);
    if (!step.op->JoinsInputsAlongLastAxis() || whole.dtype() != DT_FLOAT ||
        whole.rank() < 1) {
      continue;
    }
    const int64_t row = whole.dim(whole.rank() - 1);
    int64_t column = 0;  // where input j starts along the last axis
    for (int j = 0; j < join->num_inputs(); ++j) {
      const Tensor *input = &join->input(j);
      const int64_t width = input->dim(input->rank() - 1);
      auto made_by = producer.find(input);
      // Its only reader is this join, and a producer that can write there.
      if (made_by != producer.end() && uses[input] == 1 && width > 0 &&
          steps_[made_by->second].op->WritesStridedOutput()) {
        steps_[made_by->second].context->set_output_row_stride(row);
        join->set_input_in_place(j);
        written_in_place_[input] =
            InPlaceInput{&whole, column * static_cast<int64_t>(sizeof(float))};
      }
      column += width;
    }
  }
}

std::unordered_set<const Tensor *> Net::GraphOutputTensors() const {
  std::unordered_set<const Tensor *> graph_outputs;
  for (const std::string &name : outputs_) {
    graph_outputs.insert(tensors_.at(name).get());
  }
  return graph_outputs;
}

void Net::PlanInPlaceSplits() {
  sliced_at_.clear();
  std::unordered_map<const Tensor *, std::vector<int>> readers;
  for (int i = 0; i < static_cast<int>(steps_.size()); ++i) {
    const OpContext &context = *steps_[i].context;
    for (int j = 0; j < context.num_inputs(); ++j) {
      readers[&context.input(j)].push_back(i);
    }
  }
  const std::unordered_set<const Tensor *> graph_outputs = GraphOutputTensors();
  for (int i = 0; i < static_cast<int>(steps_.size()); ++i) {
    OpContext *producer = steps_[i].context.get();
    if (!steps_[i].op->WritesOutputSlices() || producer->num_outputs() != 1) {
      continue;
    }
    const Tensor *whole = producer->output(0);
    auto read_by = readers.find(whole);
    if (graph_outputs.count(whole) > 0 || read_by == readers.end()) continue;
    // Every output of every reader must be a range of the last axis.
    std::vector<OpContext::OutputSlice> slices;
    bool every_output = true;
    for (int reader : read_by->second) {
      every_output = AppendRangesTaken(
          *steps_[reader].op, steps_[reader].context.get(), *whole, &slices);
      if (!every_output) break;
    }
    if (!every_output || slices.empty()) continue;
    for (int reader : read_by->second) {
      steps_[reader].context->set_written_by_producer();
    }
    for (const OpContext::OutputSlice &slice : slices) {
      producer->add_output_slice(slice);
      sliced_at_[slice.tensor] = i;
    }
  }
}

void Net::PlanBuffers() {
  const int num_steps = static_cast<int>(steps_.size());
  // Hash tables: a transformer's 70 steps spent a tenth of their load in
  // these maps' allocations and pointer compares.
  std::unordered_map<const Tensor *, int> last_use;
  last_use.reserve(tensors_.size());
  for (int i = 0; i < num_steps; ++i) {
    const OpContext &context = *steps_[i].context;
    for (int j = 0; j < context.num_inputs(); ++j) {
      last_use[&context.input(j)] = i;
    }
  }
  const std::unordered_set<const Tensor *> graph_outputs = GraphOutputTensors();
  std::vector<BufferRequest> requests;
  std::vector<std::vector<const Tensor *>> members;
  // Absent: external or constant.
  std::unordered_map<const Tensor *, int> buffer_of;
  buffer_of.reserve(tensors_.size());

  auto new_buffer = [&](int64_t bytes, int step) {
    requests.push_back(BufferRequest{bytes, step, step});
    members.emplace_back();
    return static_cast<int>(requests.size()) - 1;
  };
  // Whether step's output 0 may take over the buffer of its input
  // `reused`: no tensor of that buffer is read after the step or handed to
  // the caller, and no other input of the step is in it (conv(x) + x must
  // not write over x while reading it).
  auto can_overwrite = [&](int step, int reused) {
    const OpContext &context = *steps_[step].context;
    auto it = buffer_of.find(&context.input(reused));
    if (it == buffer_of.end()) return false;
    for (int j = 0; j < context.num_inputs(); ++j) {
      auto other = buffer_of.find(&context.input(j));
      if (j != reused && other != buffer_of.end() &&
          other->second == it->second) {
        return false;
      }
    }
    for (const Tensor *member : members[it->second]) {
      if (graph_outputs.count(member)) return false;
      auto use = last_use.find(member);
      if (use != last_use.end() && use->second > step) return false;
    }
    return true;
  };

  for (int i = 0; i < num_steps; ++i) {
    OpContext *context = steps_[i].context.get();
    const OutputMemory memory = steps_[i].op->output_memory();
    for (int j = 0; j < context->num_outputs(); ++j) {
      Tensor *output = context->output(j);
      const Tensor *input0 =
          context->num_inputs() > 0 ? &context->input(0) : nullptr;
      const int reused = j == 0 ? ReusableInput(*context, memory) : -1;
      int buffer = -1;
      int64_t offset = 0;
      auto in_place = written_in_place_.find(output);
      if (in_place != written_in_place_.end()) {
        // The joined tensor's buffer, live from its first producer on.
        const Tensor *whole = in_place->second.whole;
        auto it = buffer_of.find(whole);
        buffer =
            it != buffer_of.end() ? it->second : new_buffer(whole->bytes(), i);
        buffer_of[whole] = buffer;
        offset = in_place->second.offset;
      } else if (buffer_of.count(output) > 0) {
        buffer = buffer_of.at(output);  // a join, created by its producers
      } else if (j == 0 && input0 != nullptr &&
                 memory == OutputMemory::kAliasInput0) {
        auto it = buffer_of.find(input0);
        if (it == buffer_of.end()) continue;  // rebound from input at Run
        buffer = it->second;
      } else if (reused >= 0 &&
                 context->input(reused).bytes() == output->bytes() &&
                 can_overwrite(i, reused)) {
        buffer = buffer_of.at(&context->input(reused));
      } else {
        buffer = new_buffer(output->bytes(), i);
      }
      // Written before its own step, by its input's producer.
      auto sliced = sliced_at_.find(output);
      if (sliced != sliced_at_.end()) {
        requests[buffer].first_step =
            std::min(requests[buffer].first_step, sliced->second);
      }
      buffer_of[output] = buffer;
      members[buffer].push_back(output);
      placements_.push_back(Placement{output, i, buffer, offset});
    }
    if (context->scratch_bytes() > 0) {
      placements_.push_back(
          Placement{nullptr, i, new_buffer(context->scratch_bytes(), i), 0});
    }
  }
  for (size_t b = 0; b < requests.size(); ++b) {
    for (const Tensor *member : members[b]) {
      if (graph_outputs.count(member)) requests[b].last_step = num_steps;
      auto use = last_use.find(member);
      if (use != last_use.end()) {
        requests[b].last_step = std::max(requests[b].last_step, use->second);
      }
    }
  }
  plan_ = PlanMemory(requests);
}

void Net::BindArena(uint8_t *arena) {
  for (const Placement &placement : placements_) {
    uint8_t *address =
        arena + plan_.offsets[placement.buffer] + placement.offset;
    if (placement.tensor != nullptr) {
      placement.tensor->BindData(address);
    } else {
      steps_[placement.step].context->BindScratch(address);
    }
  }
}

Tensor *Net::input(const std::string &name) {
  auto it = tensors_.find(name);
  return it == tensors_.end() ? nullptr : it->second.get();
}

const Tensor *Net::output(const std::string &name) const {
  auto it = tensors_.find(name);
  return it == tensors_.end() ? nullptr : it->second.get();
}

int Net::input_data_format(const std::string &name) const {
  auto it = input_formats_.find(name);
  return it == input_formats_.end() ? 0 : it->second;
}

int Net::output_data_format(const std::string &name) const {
  auto it = output_formats_.find(name);
  return it == output_formats_.end() ? 0 : it->second;
}

MaceStatus Net::Run(RunMetadata *run_metadata) {
  if (run_metadata != nullptr) run_metadata->op_stats.clear();
  for (Step &step : steps_) {
    OpContext *context = step.context.get();
    if (step.op->output_memory() == OutputMemory::kAliasInput0) {
      context->output(0)->BindData(
          const_cast<void *>(context->input(0).raw_data()));
    }
    const int64_t start = run_metadata != nullptr ? NowMicros() : 0;
    if (!context->written_by_producer()) {
      MACE_RETURN_IF_ERROR(step.op->Run(context));
    }
    if (run_metadata != nullptr) {
      OperatorStats stats = step.stats;
      stats.stats.start_micros = start;
      stats.stats.end_micros = NowMicros();
      run_metadata->op_stats.push_back(std::move(stats));
    }
  }
  return MaceStatus::MACE_SUCCESS;
}

OperatorStats Net::DescribeStep(const Step &step) {
  const OpContext &context = *step.context;
  const OperatorDef &def = context.def();
  OperatorStats stats;
  stats.operator_name = def.name();
  stats.type = def.type();
  for (int i = 0; i < context.num_outputs(); ++i) {
    stats.output_shape.push_back(context.output(i).shape());
  }
  stats.args.strides = IntsArg(def, "strides");
  stats.args.paddings = IntsArg(def, "padding_values");
  stats.args.dilations = IntsArg(def, "dilations");
  stats.args.padding_type = -1;
  for (const Argument &arg : def.arg()) {
    if (arg.name() == "padding" && arg.has_i()) {
      stats.args.padding_type = static_cast<int>(arg.i());
    }
  }
  for (int k : IntsArg(def, "kernels")) stats.args.kernels.push_back(k);
  const int filter = step.op->FilterInput();
  if (filter >= 0 && filter < context.num_inputs()) {
    stats.args.kernels = context.input(filter).shape();
  }
  stats.macs = step.op->MacCount(context);
  stats.stats = CallStats{0, 0};
  return stats;
}

}  // namespace mace
