// Parses a model graph (`.pb`: NetDef or MultiNetDef) and checks it against
// its weights before anything uses them: op types known, tensor names
// unique, dims sane, every weight inside the weights blob, every op input
// produced by something, no duplicate outputs, no cycles. Each problem is a
// MaceStatus whose message names the op, tensor or field.

#ifndef MACE_MODEL_MODEL_LOADER_H_
#define MACE_MODEL_MODEL_LOADER_H_

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "mace/core/tensor.h"
#include "mace/model/mace.pb.h"
#include "mace/public/mace.h"

namespace mace {

// Parses NetDef bytes, or MultiNetDef bytes whose nets are merged into one
// NetDef (ops in order, weight offsets rebased onto the whole file).
MaceStatus ParseModelGraph(const unsigned char *bytes, size_t size,
                           NetDef *net);

// Checks everything that does not need the ops themselves, and sorts the
// ops topologically in place (stable for already sorted graphs).
// `is_known_op` tells which op types exist.
MaceStatus ValidateModel(NetDef *net, int64_t weights_size,
                         const std::function<bool(const std::string &)> &is_known_op);

// Turns a validated ConstTensor into a constant Tensor. fp32 and int32
// data that is 4-byte aligned is borrowed from `weights` (*borrowed set to
// true); fp16, bf16 and misaligned data are decoded into owned storage.
MaceStatus LoadConstTensor(const ConstTensor &proto, const NetDef &net,
                           const unsigned char *weights, int64_t weights_size,
                           Tensor *tensor, bool *borrowed);

// Reads a whole file; the error names the path.
MaceStatus ReadFileToString(const std::string &path, std::string *contents);

}  // namespace mace

#endif  // MACE_MODEL_MODEL_LOADER_H_
