#include "mace/converter/tensorflow/tf_tensor.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>

#include "mace/converter/common/frontend.h"
#include "mace/core/status.h"

namespace mace {
namespace converter {
namespace {

float HalfToFloat(uint16_t bits) {
  const uint32_t sign = (bits >> 15) & 1, exponent = (bits >> 10) & 0x1f,
                 mantissa = bits & 0x3ff;
  float value;
  if (exponent == 0) {
    value = std::ldexp(static_cast<float>(mantissa), -24);
  } else if (exponent == 31) {
    value = mantissa == 0 ? std::numeric_limits<float>::infinity()
                          : std::numeric_limits<float>::quiet_NaN();
  } else {
    value = std::ldexp(static_cast<float>(mantissa | 0x400),
                       static_cast<int>(exponent) - 25);
  }
  return sign ? -value : value;
}

float BFloat16ToFloat(uint16_t bits) {
  const uint32_t word = static_cast<uint32_t>(bits) << 16;
  float value;
  std::memcpy(&value, &word, sizeof(value));
  return value;
}

// Bytes per element of tensor_content; 0 for types it cannot hold.
size_t ElementBytes(int type) {
  switch (type) {
    case tf::DT_FLOAT:
    case tf::DT_INT32:
    case tf::DT_UINT32:
      return 4;
    case tf::DT_DOUBLE:
    case tf::DT_INT64:
    case tf::DT_UINT64:
      return 8;
    case tf::DT_HALF:
    case tf::DT_BFLOAT16:
    case tf::DT_INT16:
    case tf::DT_UINT16:
      return 2;
    case tf::DT_INT8:
    case tf::DT_UINT8:
    case tf::DT_BOOL:
      return 1;
    default:
      return 0;
  }
}

template <typename T>
T Load(const char *p) {
  T value;
  std::memcpy(&value, p, sizeof(T));
  return value;
}

// One element of tensor_content as a double (exact for int32 and for every
// float type; int64 loses nothing after clamping to int32 later).
double ContentValue(int type, const char *p) {
  switch (type) {
    case tf::DT_FLOAT:
      return Load<float>(p);
    case tf::DT_DOUBLE:
      return Load<double>(p);
    case tf::DT_HALF:
      return HalfToFloat(Load<uint16_t>(p));
    case tf::DT_BFLOAT16:
      return BFloat16ToFloat(Load<uint16_t>(p));
    case tf::DT_INT32:
      return Load<int32_t>(p);
    case tf::DT_UINT32:
      return Load<uint32_t>(p);
    case tf::DT_INT64:
      return static_cast<double>(Load<int64_t>(p));
    case tf::DT_UINT64:
      return static_cast<double>(Load<uint64_t>(p));
    case tf::DT_INT16:
      return Load<int16_t>(p);
    case tf::DT_UINT16:
      return Load<uint16_t>(p);
    case tf::DT_INT8:
      return Load<int8_t>(p);
    case tf::DT_UINT8:
      return Load<uint8_t>(p);
    case tf::DT_BOOL:
      return *p != 0 ? 1 : 0;
    default:
      return 0;
  }
}

// The *_val field of `type` as doubles (a few values: TF writes scalars and
// splats this way, the last value repeating to fill the tensor).
std::vector<double> ValField(const tf::TensorProto &proto, int type) {
  std::vector<double> values;
  auto append = [&values](const auto &field) {
    values.assign(field.begin(), field.end());
  };
  switch (type) {
    case tf::DT_FLOAT:
      append(proto.float_val());
      break;
    case tf::DT_DOUBLE:
      append(proto.double_val());
      break;
    case tf::DT_INT32:
    case tf::DT_INT16:
    case tf::DT_INT8:
    case tf::DT_UINT8:
    case tf::DT_UINT16:
      append(proto.int_val());
      break;
    case tf::DT_INT64:
      append(proto.int64_val());
      break;
    case tf::DT_UINT32:
      append(proto.uint32_val());
      break;
    case tf::DT_UINT64:
      append(proto.uint64_val());
      break;
    case tf::DT_BOOL:
      append(proto.bool_val());
      break;
    case tf::DT_HALF:
      for (int32_t bits : proto.half_val()) {
        values.push_back(HalfToFloat(static_cast<uint16_t>(bits)));
      }
      break;
    case tf::DT_BFLOAT16:
      for (int32_t bits : proto.half_val()) {
        values.push_back(BFloat16ToFloat(static_cast<uint16_t>(bits)));
      }
      break;
    default:
      break;
  }
  return values;
}

}  // namespace

const char *TfTypeName(int type) {
  switch (type) {
    case tf::DT_FLOAT:
      return "float32";
    case tf::DT_DOUBLE:
      return "float64";
    case tf::DT_INT32:
      return "int32";
    case tf::DT_UINT8:
      return "uint8";
    case tf::DT_INT16:
      return "int16";
    case tf::DT_INT8:
      return "int8";
    case tf::DT_STRING:
      return "string";
    case tf::DT_COMPLEX64:
      return "complex64";
    case tf::DT_INT64:
      return "int64";
    case tf::DT_BOOL:
      return "bool";
    case tf::DT_BFLOAT16:
      return "bfloat16";
    case tf::DT_UINT16:
      return "uint16";
    case tf::DT_COMPLEX128:
      return "complex128";
    case tf::DT_HALF:
      return "float16";
    case tf::DT_RESOURCE:
      return "resource";
    case tf::DT_VARIANT:
      return "variant";
    case tf::DT_UINT32:
      return "uint32";
    case tf::DT_UINT64:
      return "uint64";
    default:
      return "an unknown type";
  }
}

MaceStatus TfTypeIsInt(int type, const std::string &what, bool *is_int) {
  switch (type) {
    case tf::DT_FLOAT:
    case tf::DT_DOUBLE:
    case tf::DT_HALF:
    case tf::DT_BFLOAT16:
      *is_int = false;
      return MaceStatus::MACE_SUCCESS;
    case tf::DT_INT32:
    case tf::DT_INT64:
    case tf::DT_INT16:
    case tf::DT_INT8:
    case tf::DT_UINT8:
    case tf::DT_UINT16:
    case tf::DT_UINT32:
    case tf::DT_UINT64:
    case tf::DT_BOOL:
      *is_int = true;
      return MaceStatus::MACE_SUCCESS;
    default:
      return Unsupported(what, ": element type ", TfTypeName(type), " (", type,
                         ") is not supported (only float and integer types)");
  }
}

MaceStatus DecodeTfTensor(const tf::TensorProto &proto, const std::string &what,
                          DecodedTfTensor *tensor) {
  const int type = proto.dtype();
  MACE_RETURN_IF_ERROR(TfTypeIsInt(type, what, &tensor->is_int));
  if (proto.tensor_shape().unknown_rank()) {
    return InvalidArgs(what, ": a constant must have a known shape");
  }
  tensor->shape.clear();
  int64_t count = 1;
  for (const auto &dim : proto.tensor_shape().dim()) {
    if (dim.size() < 0 || dim.size() > kMaxTfTensorElements) {
      return InvalidArgs(what, ": invalid dimension ", dim.size());
    }
    tensor->shape.push_back(dim.size());
    count *= dim.size();
    if (count > kMaxTfTensorElements) {
      return InvalidArgs(what, ": ", count, "+ elements, more than the ",
                         kMaxTfTensorElements, " a constant may have");
    }
  }
  tensor->floats.clear();
  tensor->ints.clear();
  // Values go straight into the output (no wider copy of a large tensor).
  auto store = [tensor](int64_t i, double v) {
    if (tensor->is_int) {
      tensor->ints[i] = std::isnan(v)
                            ? 0
                            : ClampToInt32(static_cast<int64_t>(
                                  std::max(std::min(v, 9.2e18), -9.2e18)));
    } else {
      tensor->floats[i] = static_cast<float>(v);
    }
  };
  const std::string &content = proto.tensor_content();
  std::vector<double> values;
  if (content.empty()) {
    values = ValField(proto, type);
    if (static_cast<int64_t>(values.size()) > count) {
      return InvalidArgs(what, ": ", values.size(), " values for shape ",
                         ShapeToString(tensor->shape), " (", count,
                         " elements)");
    }
  } else {
    const size_t bytes = ElementBytes(type);
    if (content.size() != static_cast<size_t>(count) * bytes) {
      return InvalidArgs(what, ": tensor_content has ", content.size(),
                         " bytes, shape ", ShapeToString(tensor->shape), " of ",
                         TfTypeName(type), " needs ", count * bytes);
    }
  }
  if (tensor->is_int) {
    tensor->ints.resize(count);
  } else {
    tensor->floats.resize(count);
  }
  if (!content.empty()) {
    const size_t bytes = ElementBytes(type);
    for (int64_t i = 0; i < count; ++i) {
      store(i, ContentValue(type, content.data() + i * bytes));
    }
  } else {
    // TensorFlow's rule: missing trailing values repeat the last one. The
    // repeat is converted once and filled: a GraphDef of 100 bytes can
    // declare 2^28 elements, which one conversion each took seconds over.
    const int64_t given = static_cast<int64_t>(values.size());
    for (int64_t i = 0; i < given; ++i) store(i, values[i]);
    if (given < count) {
      store(given, values.empty() ? 0.0 : values.back());
      if (tensor->is_int) {
        std::fill(tensor->ints.begin() + given + 1, tensor->ints.end(),
                  tensor->ints[given]);
      } else {
        std::fill(tensor->floats.begin() + given + 1, tensor->floats.end(),
                  tensor->floats[given]);
      }
    }
  }
  return MaceStatus::MACE_SUCCESS;
}

}  // namespace converter
}  // namespace mace
