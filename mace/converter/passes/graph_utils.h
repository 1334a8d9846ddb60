// Small helpers for passes over GraphBuilder's op list.

#ifndef MACE_CONVERTER_PASSES_GRAPH_UTILS_H_
#define MACE_CONVERTER_PASSES_GRAPH_UTILS_H_

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "mace/converter/ir/graph_builder.h"
#include "mace/model/mace.pb.h"

namespace mace {
namespace converter {

// Op indices reading each tensor.
std::map<std::string, std::vector<size_t>> ConsumersOf(
    const std::vector<OperatorDef> &ops);
// Index of the op producing `tensor`, or -1.
int ProducerOf(const std::vector<OperatorDef> &ops, const std::string &tensor);

// Every op input named `from` now reads `to`.
void ReplaceUses(std::vector<OperatorDef> *ops, const std::string &from,
                 const std::string &to);
// Removes the ops whose flag is set, keeping the order of the rest.
void EraseOps(std::vector<OperatorDef> *ops, const std::vector<bool> &erase);

const Argument *FindArg(const OperatorDef &op, const std::string &name);
std::vector<int64_t> IntsArg(const OperatorDef &op, const std::string &name);
int64_t IntArg(const OperatorDef &op, const std::string &name,
               int64_t default_value);
std::string StringArg(const OperatorDef &op, const std::string &name,
                      const std::string &default_value);
void SetIntsArg(OperatorDef *op, const std::string &name,
                const std::vector<int64_t> &values);
// Sets int argument `name` of `op` to `value`, adding it when absent.
void SetIntArg(OperatorDef *op, const std::string &name, int64_t value);

// A constant's values as floats (int32 constants widened).
std::vector<float> ConstantValues(const GraphBuilder &graph,
                                  const std::string &name);

}  // namespace converter
}  // namespace mace

#endif  // MACE_CONVERTER_PASSES_GRAPH_UTILS_H_
