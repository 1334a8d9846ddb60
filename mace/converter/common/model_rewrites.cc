#include "mace/converter/common/model_rewrites.h"

#include <algorithm>
#include <map>
#include <set>
#include <string>

#include "mace/model/op_provenance.h"

namespace mace {
namespace converter {
namespace {

void RemoveArg(OperatorDef *op, const std::string &name) {
  auto *args = op->mutable_arg();
  args->erase(std::remove_if(args->begin(), args->end(),
                             [&](const Argument &arg) {
                               return arg.name() == name;
                             }),
              args->end());
}

}  // namespace

void ObfuscateNames(NetDef *net) {
  std::set<std::string> kept;
  for (const InputOutputInfo &info : net->input_info()) kept.insert(info.name());
  for (const InputOutputInfo &info : net->output_info()) {
    kept.insert(info.name());
  }
  std::map<std::string, std::string> renamed;
  auto rename = [&](const std::string &name, const char *prefix) {
    if (name.empty() || kept.count(name) > 0) return name;
    auto found = renamed.find(name);
    if (found != renamed.end()) return found->second;
    const std::string fresh = prefix + std::to_string(renamed.size());
    renamed.emplace(name, fresh);
    return fresh;
  };
  for (ConstTensor &tensor : *net->mutable_tensors()) {
    tensor.set_name(rename(tensor.name(), "w"));
  }
  int op_index = 0;
  for (OperatorDef &op : *net->mutable_op()) {
    op.set_name("op" + std::to_string(op_index++));
    RemoveArg(&op, kFusedSourceNodesArg);
    for (std::string &input : *op.mutable_input()) input = rename(input, "t");
    for (std::string &output : *op.mutable_output()) {
      output = rename(output, "t");
    }
  }
}

void SetWinograd(NetDef *net, int tile) {
  if (tile < 0) return;
  for (OperatorDef &op : *net->mutable_op()) {
    if (op.type() != "Conv2D") continue;
    RemoveArg(&op, "winograd");
    Argument *arg = op.add_arg();
    arg->set_name("winograd");
    arg->set_i(tile);
  }
}

}  // namespace converter
}  // namespace mace
