#include "mace/model/model_loader.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <set>
#include <string_view>
#include <unordered_map>
#include <unordered_set>

#include "mace/core/status.h"
#include "mace/core/types.h"
#include "mace/model/float_storage.h"

namespace mace {
namespace {

std::string OpLabel(const OperatorDef &op, int index) {
  return StrCat("op '",
                op.name().empty() ? "#" + std::to_string(index) : op.name(),
                "' (", op.type(), ")");
}

// The byte range of a tensor's data inside the weights, or an error.
MaceStatus TensorByteRange(const ConstTensor &tensor, const NetDef &net,
                           int64_t weights_size, int64_t *begin,
                           int64_t *bytes) {
  const int element_size = DataTypeSize(tensor.data_type());
  const int64_t count = tensor.data_size();
  if (count < 0 || count > (int64_t{1} << 40)) {
    return InvalidArgs("tensor '", tensor.name(), "': data_size ", count,
                       " is out of range");
  }
  *bytes = count * element_size;
  if (tensor.offset() < 0 || tensor.offset() > weights_size) {
    return InvalidArgs("tensor '", tensor.name(), "': offset ", tensor.offset(),
                       " lies outside the weights (", weights_size, " bytes)");
  }
  *begin = int64_t{net.data_offset()} + tensor.offset();
  if (*begin > weights_size || *bytes > weights_size - *begin) {
    return InvalidArgs("tensor '", tensor.name(), "': bytes [", *begin, ", ",
                       *begin + *bytes, ") lie outside the weights (",
                       weights_size, " bytes)");
  }
  return MaceStatus::MACE_SUCCESS;
}

MaceStatus ValidateTensor(const ConstTensor &tensor, const NetDef &net,
                          int64_t weights_size) {
  if (tensor.name().empty()) return InvalidArgs("a tensor has no name");
  Shape dims(tensor.dims().begin(), tensor.dims().end());
  const int64_t count = ShapeElementCount(dims);
  if (count < 0) {
    return InvalidArgs("tensor '", tensor.name(), "': dims ",
                       ShapeToString(dims), " are negative or overflow");
  }
  switch (tensor.data_type()) {
    case DT_FLOAT:
    case DT_HALF:
    case DT_BFLOAT16:
    case DT_INT32:
    case DT_UINT8:
      break;
    default:
      return Unsupported("tensor '", tensor.name(), "': data_type ",
                         DataTypeName(tensor.data_type()),
                         " is not supported for weights");
  }
  const int inline_count = tensor.float_data_size() + tensor.int32_data_size();
  if (inline_count > 0) {
    // Inline values are 4 bytes each; a uint8 tensor holds 1-byte elements.
    if (tensor.data_type() == DT_UINT8) {
      return Unsupported("tensor '", tensor.name(),
                         "': uint8 data must be in the weights, not inline");
    }
    const bool float_inline = tensor.float_data_size() > 0;
    if (float_inline != (tensor.data_type() != DT_INT32) ||
        inline_count != count) {
      return InvalidArgs("tensor '", tensor.name(), "': ", inline_count,
                         " inline values do not match dims ",
                         ShapeToString(dims), " and type ",
                         DataTypeName(tensor.data_type()));
    }
    return MaceStatus::MACE_SUCCESS;
  }
  if (tensor.data_size() != count) {
    return InvalidArgs("tensor '", tensor.name(), "': data_size ",
                       tensor.data_size(), " does not match dims ",
                       ShapeToString(dims), " (", count, " elements)");
  }
  int64_t begin = 0, bytes = 0;
  return TensorByteRange(tensor, net, weights_size, &begin, &bytes);
}

MaceStatus ValidateIoInfo(const InputOutputInfo &info, const char *kind) {
  if (info.name().empty()) return InvalidArgs("an ", kind, " has no name");
  for (int32_t d : info.dims()) {
    if (d < 0) {
      return InvalidArgs(kind, " '", info.name(), "': negative dim ", d);
    }
  }
  if (info.data_type() != DT_FLOAT && info.data_type() != DT_INT32) {
    return Unsupported(kind, " '", info.name(), "': data_type ",
                       DataTypeName(info.data_type()),
                       " (float32 and int32 are supported)");
  }
  const Shape dims(info.dims().begin(), info.dims().end());
  if (!HasValidSize(dims, info.data_type())) {
    return InvalidArgs(kind, " '", info.name(), "': dims ",
                       ShapeToString(dims), " hold more than ",
                       kMaxTensorBytes >> 30, " GiB");
  }
  const int format = info.data_format();
  if (format != 0 && format != 1 && format != 2) {
    return InvalidArgs(kind, " '", info.name(), "': data_format ", format,
                       " (expected 0 NONE, 1 NHWC or 2 NCHW)");
  }
  return MaceStatus::MACE_SUCCESS;
}

using NameIndex = std::unordered_map<std::string_view, int>;

// The op that produces `name`, or -1 (a weight, a model input, or nothing).
int ProducerOf(const NameIndex &producer, const std::string &name) {
  auto it = producer.find(name);
  return it == producer.end() ? -1 : it->second;
}

// True when every op consumes only what ops before it produce, the order
// converters write: then the graph has no cycle and needs no sorting. An op
// that consumes its own output makes it false, and SortOps reports it.
bool ProducersComeFirst(const NetDef &net, const NameIndex &producer) {
  for (int i = 0; i < net.op_size(); ++i) {
    for (const std::string &input : net.op(i).input()) {
      if (ProducerOf(producer, input) >= i) return false;
    }
  }
  return true;
}

// Kahn's algorithm, taking ready ops in file order so sorted graphs keep
// their order.
MaceStatus SortOps(NetDef *net, const NameIndex &producer) {
  if (ProducersComeFirst(*net, producer)) return MaceStatus::MACE_SUCCESS;
  const int n = net->op_size();
  std::vector<std::vector<int>> consumers(n);
  std::vector<int> pending(n, 0);
  for (int i = 0; i < n; ++i) {
    std::set<int> deps;
    for (const std::string &input : net->op(i).input()) {
      const int dep = ProducerOf(producer, input);
      if (dep >= 0) deps.insert(dep);
    }
    for (int dep : deps) {
      if (dep == i) {
        return InvalidArgs(OpLabel(net->op(i), i),
                           " consumes its own output: the graph has a cycle");
      }
      consumers[dep].push_back(i);
      ++pending[i];
    }
  }
  std::set<int> ready;
  for (int i = 0; i < n; ++i) {
    if (pending[i] == 0) ready.insert(i);
  }
  std::vector<int> order;
  while (!ready.empty()) {
    const int next = *ready.begin();
    ready.erase(ready.begin());
    order.push_back(next);
    for (int consumer : consumers[next]) {
      if (--pending[consumer] == 0) ready.insert(consumer);
    }
  }
  if (static_cast<int>(order.size()) != n) {
    for (int i = 0; i < n; ++i) {
      if (pending[i] > 0) {
        return InvalidArgs("the graph has a cycle through ",
                           OpLabel(net->op(i), i));
      }
    }
  }
  bool in_order = true;
  for (int i = 0; i < n && in_order; ++i) in_order = order[i] == i;
  if (in_order) return MaceStatus::MACE_SUCCESS;
  google::protobuf::RepeatedPtrField<OperatorDef> sorted;
  for (int index : order) sorted.Add()->Swap(net->mutable_op(index));
  net->mutable_op()->Swap(&sorted);
  return MaceStatus::MACE_SUCCESS;
}

}  // namespace

MaceStatus ParseModelGraph(const unsigned char *bytes, size_t size,
                           NetDef *net) {
  if (bytes == nullptr && size > 0) {
    return InvalidArgs("model graph: null buffer");
  }
  if (size > static_cast<size_t>(INT32_MAX)) {
    return InvalidArgs("model graph: ", size, " bytes is too large");
  }
  const bool net_ok = net->ParseFromArray(bytes, static_cast<int>(size));
  if (net_ok && net->op_size() > 0) return MaceStatus::MACE_SUCCESS;
  MultiNetDef multi;
  if (multi.ParseFromArray(bytes, static_cast<int>(size)) &&
      multi.net_def_size() > 0) {
    net->Clear();
    for (const NetDef &part : multi.net_def()) {
      if (net->op_size() == 0) {
        *net = part;
        net->clear_op();
        net->clear_tensors();
        net->clear_output_info();
        net->set_data_offset(0);
      }
      for (const OperatorDef &op : part.op()) *net->add_op() = op;
      for (const ConstTensor &tensor : part.tensors()) {
        ConstTensor *merged = net->add_tensors();
        *merged = tensor;
        merged->set_offset(tensor.offset() + part.data_offset());
      }
    }
    for (const InputOutputInfo &info :
         multi.net_def(multi.net_def_size() - 1).output_info()) {
      *net->add_output_info() = info;
    }
    return MaceStatus::MACE_SUCCESS;
  }
  if (!net_ok) {
    return InvalidArgs("model graph (", size,
                       " bytes) is not a valid NetDef or MultiNetDef protobuf");
  }
  return InvalidArgs("model graph has no ops");
}

MaceStatus ValidateModel(
    NetDef *net, int64_t weights_size,
    const std::function<bool(const std::string &)> &is_known_op) {
  if (net->op_size() == 0) return InvalidArgs("model graph has no ops");
  if (net->data_offset() < 0 || net->data_size() < 0 ||
      int64_t{net->data_offset()} > weights_size) {
    return InvalidArgs("net data_offset ", net->data_offset(), " / data_size ",
                       net->data_size(), " do not fit the weights (",
                       weights_size, " bytes)");
  }
  // Views of the names in *net, which nothing changes until SortOps.
  std::unordered_set<std::string_view> defined;
  defined.reserve(net->tensors_size() + net->input_info_size());
  for (const ConstTensor &tensor : net->tensors()) {
    MACE_RETURN_IF_ERROR(ValidateTensor(tensor, *net, weights_size));
    if (!defined.insert(tensor.name()).second) {
      return InvalidArgs("tensor '", tensor.name(), "' is defined twice");
    }
  }
  for (const InputOutputInfo &info : net->input_info()) {
    MACE_RETURN_IF_ERROR(ValidateIoInfo(info, "input"));
    if (!defined.insert(info.name()).second) {
      return InvalidArgs("input '", info.name(),
                         "' is defined twice (or is also a weight)");
    }
  }
  NameIndex producer;
  producer.reserve(net->op_size());
  // A model has far fewer op types than ops; is_known_op may be costly.
  std::unordered_set<std::string_view> known_types;
  for (int i = 0; i < net->op_size(); ++i) {
    const OperatorDef &op = net->op(i);
    if (op.type().empty()) return InvalidArgs("op #", i, " has no type");
    if (!known_types.count(op.type())) {
      if (!is_known_op(op.type())) {
        return Unsupported(OpLabel(op, i), ": unknown op type '", op.type(),
                           "'");
      }
      known_types.insert(op.type());
    }
    // Every op reads input 0 and writes output 0, some before they check
    // their counts.
    if (op.input_size() == 0) {
      return InvalidArgs(OpLabel(op, i), " has no inputs");
    }
    if (op.output_size() == 0) {
      return InvalidArgs(OpLabel(op, i), " has no outputs");
    }
    for (const std::string &output : op.output()) {
      if (output.empty()) {
        return InvalidArgs(OpLabel(op, i), " has an output with no name");
      }
      if (defined.count(output) || !producer.emplace(output, i).second) {
        return InvalidArgs(OpLabel(op, i), ": output '", output,
                           "' is already produced elsewhere (duplicate "
                           "output name)");
      }
    }
  }
  for (int i = 0; i < net->op_size(); ++i) {
    const OperatorDef &op = net->op(i);
    for (const std::string &input : op.input()) {
      if (!defined.count(input) && !producer.count(input)) {
        return InvalidArgs(OpLabel(op, i), ": input '", input,
                           "' is not produced by any op, weight or model "
                           "input");
      }
    }
  }
  for (const InputOutputInfo &info : net->output_info()) {
    MACE_RETURN_IF_ERROR(ValidateIoInfo(info, "output"));
    if (!producer.count(info.name()) && !defined.count(info.name())) {
      return InvalidArgs("output '", info.name(),
                         "' is not produced by any op");
    }
  }
  return SortOps(net, producer);
}

MaceStatus LoadConstTensor(const ConstTensor &proto, const NetDef &net,
                           const unsigned char *weights, int64_t weights_size,
                           Tensor *tensor, bool *borrowed) {
  const DataType stored = proto.data_type();
  const DataType compute =
      (stored == DT_HALF || stored == DT_BFLOAT16) ? DT_FLOAT : stored;
  *tensor = Tensor(proto.name(), compute,
                   Shape(proto.dims().begin(), proto.dims().end()));
  tensor->set_constant(true);
  // Quantized weights (uint8 data, int32 biases) keep their parameters.
  tensor->set_scale(proto.scale());
  tensor->set_zero_point(proto.zero_point());
  *borrowed = false;
  const int64_t count = tensor->size();
  if (proto.float_data_size() > 0 || proto.int32_data_size() > 0) {
    MACE_RETURN_IF_ERROR(tensor->AllocateOwned());
    if (compute == DT_INT32) {
      std::memcpy(tensor->raw_mutable_data(), proto.int32_data().data(),
                  count * 4);
    } else {
      std::memcpy(tensor->raw_mutable_data(), proto.float_data().data(),
                  count * 4);
    }
    return MaceStatus::MACE_SUCCESS;
  }
  int64_t begin = 0, bytes = 0;
  MACE_RETURN_IF_ERROR(
      TensorByteRange(proto, net, weights_size, &begin, &bytes));
  const unsigned char *src = weights + begin;
  const bool aligned = reinterpret_cast<uintptr_t>(src) % 4 == 0;
  if (stored == compute && (aligned || DataTypeSize(stored) == 1)) {
    tensor->BindData(const_cast<unsigned char *>(src));
    *borrowed = true;
    return MaceStatus::MACE_SUCCESS;
  }
  MACE_RETURN_IF_ERROR(tensor->AllocateOwned());
  if (stored == compute) {
    std::memcpy(tensor->raw_mutable_data(), src, bytes);
    return MaceStatus::MACE_SUCCESS;
  }
  float *dst = tensor->mutable_data<float>();
  for (int64_t i = 0; i < count; ++i) {
    uint16_t bits;
    std::memcpy(&bits, src + 2 * i, 2);
    dst[i] = stored == DT_HALF ? HalfToFloat(bits) : BFloat16ToFloat(bits);
  }
  return MaceStatus::MACE_SUCCESS;
}

MaceStatus ReadFileToString(const std::string &path, std::string *contents) {
  // open/read rather than stdio: a FILE's buffer, seeks and rewinds cost a
  // fresh process about as much again as the read of a small graph.
  const int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return InvalidArgs("cannot open '", path, "'");
  struct stat info;
  const bool sized = fstat(fd, &info) == 0 && info.st_size > 0;
  // One byte more than the size, so that reading on to EOF needs no larger
  // string; files that report no size (pipes, /proc) grow it as they go.
  contents->resize(sized ? static_cast<size_t>(info.st_size) + 1 : 4096);
  size_t total = 0;
  bool failed = false;
  for (;;) {
    if (total == contents->size()) contents->resize(2 * total);
    const ssize_t got = read(fd, &(*contents)[total], contents->size() - total);
    if (got > 0) {
      total += static_cast<size_t>(got);
    } else if (got == 0) {
      break;
    } else if (errno != EINTR) {
      failed = true;
      break;
    }
  }
  close(fd);
  contents->resize(total);
  if (failed) return RuntimeError("failed reading '", path, "'");
  return MaceStatus::MACE_SUCCESS;
}

}  // namespace mace
