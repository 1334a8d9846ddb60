#include "mace/model/op_provenance.h"

#include <algorithm>

namespace mace {
namespace {

Argument *FindArg(OperatorDef *op) {
  for (Argument &arg : *op->mutable_arg()) {
    if (arg.name() == kFusedSourceNodesArg) return &arg;
  }
  return nullptr;
}

}  // namespace

std::vector<std::string> FusedSourceNodes(const OperatorDef &op) {
  std::vector<std::string> names;
  for (const Argument &arg : op.arg()) {
    if (arg.name() != kFusedSourceNodesArg || arg.s().empty()) continue;
    size_t begin = 0;
    while (begin <= arg.s().size()) {
      const size_t end = std::min(arg.s().find('\n', begin), arg.s().size());
      names.push_back(arg.s().substr(begin, end - begin));
      begin = end + 1;
    }
  }
  return names;
}

void RecordFusion(const OperatorDef &absorbed, OperatorDef *op) {
  std::vector<std::string> names = {absorbed.name()};
  for (std::string &name : FusedSourceNodes(absorbed)) {
    names.push_back(std::move(name));
  }
  Argument *arg = FindArg(op);
  if (arg == nullptr) {
    arg = op->add_arg();
    arg->set_name(kFusedSourceNodesArg);
  }
  std::string text = arg->s();
  for (const std::string &name : names) {
    text += (text.empty() ? "" : "\n") + name;
  }
  arg->set_s(text);
}

std::string DescribeSourceNodes(const OperatorDef &op) {
  const std::vector<std::string> fused = FusedSourceNodes(op);
  if (fused.empty()) return op.name();
  std::string text = op.name() + " (+ ";
  for (size_t i = 0; i < fused.size(); ++i) {
    text += (i ? ", " : "") + fused[i];
  }
  return text + ")";
}

}  // namespace mace
