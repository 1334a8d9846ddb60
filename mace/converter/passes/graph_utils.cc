#include "mace/converter/passes/graph_utils.h"

namespace mace {
namespace converter {

std::map<std::string, std::vector<size_t>> ConsumersOf(
    const std::vector<OperatorDef> &ops) {
  std::map<std::string, std::vector<size_t>> consumers;
  for (size_t i = 0; i < ops.size(); ++i) {
    for (const std::string &input : ops[i].input()) {
      consumers[input].push_back(i);
    }
  }
  return consumers;
}

int ProducerOf(const std::vector<OperatorDef> &ops, const std::string &tensor) {
  for (size_t i = 0; i < ops.size(); ++i) {
    for (const std::string &output : ops[i].output()) {
      if (output == tensor) return static_cast<int>(i);
    }
  }
  return -1;
}

void ReplaceUses(std::vector<OperatorDef> *ops, const std::string &from,
                 const std::string &to) {
  for (OperatorDef &op : *ops) {
    for (int i = 0; i < op.input_size(); ++i) {
      if (op.input(i) == from) op.set_input(i, to);
    }
  }
}

void EraseOps(std::vector<OperatorDef> *ops, const std::vector<bool> &erase) {
  std::vector<OperatorDef> kept;
  for (size_t i = 0; i < ops->size(); ++i) {
    if (!erase[i]) kept.push_back(std::move((*ops)[i]));
  }
  ops->swap(kept);
}

const Argument *FindArg(const OperatorDef &op, const std::string &name) {
  for (const Argument &arg : op.arg()) {
    if (arg.name() == name) return &arg;
  }
  return nullptr;
}

std::vector<int64_t> IntsArg(const OperatorDef &op, const std::string &name) {
  const Argument *arg = FindArg(op, name);
  if (arg == nullptr) return {};
  return std::vector<int64_t>(arg->ints().begin(), arg->ints().end());
}

int64_t IntArg(const OperatorDef &op, const std::string &name,
               int64_t default_value) {
  const Argument *arg = FindArg(op, name);
  return arg != nullptr && arg->has_i() ? arg->i() : default_value;
}

std::string StringArg(const OperatorDef &op, const std::string &name,
                      const std::string &default_value) {
  const Argument *arg = FindArg(op, name);
  return arg != nullptr && arg->has_s() ? arg->s() : default_value;
}

void SetIntArg(OperatorDef *op, const std::string &name, int64_t value) {
  for (Argument &arg : *op->mutable_arg()) {
    if (arg.name() == name) {
      arg.set_i(value);
      return;
    }
  }
  Argument *arg = op->add_arg();
  arg->set_name(name);
  arg->set_i(value);
}

void SetIntsArg(OperatorDef *op, const std::string &name,
                const std::vector<int64_t> &values) {
  for (Argument &arg : *op->mutable_arg()) {
    if (arg.name() == name) {
      arg.clear_ints();
      for (int64_t v : values) arg.add_ints(v);
      return;
    }
  }
  Argument *arg = op->add_arg();
  arg->set_name(name);
  for (int64_t v : values) arg->add_ints(v);
}

std::vector<float> ConstantValues(const GraphBuilder &graph,
                                  const std::string &name) {
  const Tensor *tensor = graph.Find(name);
  if (tensor == nullptr || !tensor->is_constant()) return {};
  if (tensor->dtype() == DT_INT32) {
    const int32_t *data = tensor->data<int32_t>();
    return std::vector<float>(data, data + tensor->size());
  }
  const float *data = tensor->data<float>();
  return std::vector<float>(data, data + tensor->size());
}

}  // namespace converter
}  // namespace mace
