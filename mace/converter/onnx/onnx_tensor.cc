#include "mace/converter/onnx/onnx_tensor.h"

#include <cstring>
#include <fstream>
#include <limits>

#include "mace/converter/common/frontend.h"
#include "mace/core/status.h"
#include "mace/model/float_storage.h"

namespace mace {
namespace converter {
namespace {

using onnx::TensorProto;

template <typename T>
T Load(const char *bytes) {
  T value;
  std::memcpy(&value, bytes, sizeof(T));
  return value;
}

// Element i of little-endian raw bytes, widened.
double RawFloat(int type, const char *p) {
  switch (type) {
    case TensorProto::FLOAT: return Load<float>(p);
    case TensorProto::DOUBLE: return Load<double>(p);
    case TensorProto::FLOAT16: return HalfToFloat(Load<uint16_t>(p));
    default: return BFloat16ToFloat(Load<uint16_t>(p));
  }
}

int64_t RawInt(int type, const char *p) {
  switch (type) {
    case TensorProto::INT64: return Load<int64_t>(p);
    case TensorProto::UINT64:
      return static_cast<int64_t>(
          std::min<uint64_t>(Load<uint64_t>(p), INT64_MAX));
    case TensorProto::INT32: return Load<int32_t>(p);
    case TensorProto::UINT32: return Load<uint32_t>(p);
    case TensorProto::INT16: return Load<int16_t>(p);
    case TensorProto::UINT16: return Load<uint16_t>(p);
    case TensorProto::INT8: return Load<int8_t>(p);
    default: return Load<uint8_t>(p);  // UINT8, BOOL
  }
}

MaceStatus ReadExternal(const TensorProto &proto, const std::string &dir,
                        int64_t bytes, std::string *data) {
  std::string location;
  int64_t offset = 0, length = -1;
  for (const auto &entry : proto.external_data()) {
    if (entry.key() == "location") location = entry.value();
    if (entry.key() == "offset") offset = std::atoll(entry.value().c_str());
    if (entry.key() == "length") length = std::atoll(entry.value().c_str());
  }
  if (location.empty()) {
    return InvalidArgs("initializer '", proto.name(),
                       "': external data without a location");
  }
  if (location.find("..") != std::string::npos || location[0] == '/') {
    return InvalidArgs("initializer '", proto.name(), "': external data '",
                       location, "' must be a path inside the model folder");
  }
  const std::string path = dir.empty() ? location : dir + "/" + location;
  std::ifstream file(path, std::ios::binary);
  if (!file) {
    return InvalidArgs("initializer '", proto.name(),
                       "': cannot open external data file '", path, "'");
  }
  if (length >= 0 && length != bytes) {
    return InvalidArgs("initializer '", proto.name(), "': external length ",
                       length, " does not match its shape (", bytes,
                       " bytes)");
  }
  file.seekg(0, std::ios::end);
  const int64_t file_size = static_cast<int64_t>(file.tellg());
  if (offset < 0 || offset > file_size || bytes > file_size - offset) {
    return InvalidArgs("initializer '", proto.name(), "': bytes [", offset,
                       ", ", offset + bytes, ") lie outside '", path, "' (",
                       file_size, " bytes)");
  }
  file.seekg(offset);
  data->resize(bytes);
  file.read(&(*data)[0], bytes);
  if (!file) return InvalidArgs("failed reading '", path, "'");
  return MaceStatus::MACE_SUCCESS;
}

}  // namespace

MaceStatus OnnxElemTypeIsInt(int elem_type, const std::string &what,
                             bool *is_int) {
  switch (elem_type) {
    case TensorProto::FLOAT: case TensorProto::DOUBLE:
    case TensorProto::FLOAT16: case TensorProto::BFLOAT16:
      *is_int = false;
      return MaceStatus::MACE_SUCCESS;
    case TensorProto::INT64: case TensorProto::INT32: case TensorProto::INT16:
    case TensorProto::INT8: case TensorProto::UINT8: case TensorProto::UINT16:
    case TensorProto::UINT32: case TensorProto::UINT64: case TensorProto::BOOL:
      *is_int = true;
      return MaceStatus::MACE_SUCCESS;
    default:
      return Unsupported(what, ": element type ", elem_type,
                         " (strings and complex numbers are not supported)");
  }
}

MaceStatus DecodeOnnxTensor(const TensorProto &proto,
                            const std::string &model_dir,
                            DecodedTensor *tensor) {
  const int type = proto.data_type();
  const std::string what = "tensor '" + proto.name() + "'";
  MACE_RETURN_IF_ERROR(OnnxElemTypeIsInt(type, what, &tensor->is_int));
  tensor->shape.assign(proto.dims().begin(), proto.dims().end());
  const int64_t count = ShapeElementCount(tensor->shape);
  if (count < 0 || count > (int64_t{1} << 32)) {
    return InvalidArgs(what, ": dims ", ShapeToString(tensor->shape),
                       " are invalid");
  }
  tensor->floats.clear();
  tensor->ints.clear();
  const int64_t bytes = count * OnnxElemSize(type);
  std::string external;
  const std::string *raw = nullptr;
  if (proto.data_location() == TensorProto::EXTERNAL) {
    MACE_RETURN_IF_ERROR(ReadExternal(proto, model_dir, bytes, &external));
    raw = &external;
  } else if (proto.has_raw_data()) {
    raw = &proto.raw_data();
  }
  if (raw != nullptr) {
    if (static_cast<int64_t>(raw->size()) != bytes) {
      return InvalidArgs(what, ": ", raw->size(),
                         " bytes of data do not match its shape ",
                         ShapeToString(tensor->shape), " (", bytes,
                         " bytes)");
    }
    const int size = OnnxElemSize(type);
    for (int64_t i = 0; i < count; ++i) {
      const char *p = raw->data() + i * size;
      if (tensor->is_int) {
        tensor->ints.push_back(ClampToInt32(RawInt(type, p)));
      } else {
        tensor->floats.push_back(static_cast<float>(RawFloat(type, p)));
      }
    }
    return MaceStatus::MACE_SUCCESS;
  }
  // Typed fields: which one holds the values depends on the type.
  int64_t stored = 0;
  switch (type) {
    case TensorProto::FLOAT:
      stored = proto.float_data_size();
      tensor->floats.assign(proto.float_data().begin(),
                            proto.float_data().end());
      break;
    case TensorProto::DOUBLE:
      stored = proto.double_data_size();
      for (double v : proto.double_data()) {
        tensor->floats.push_back(static_cast<float>(v));
      }
      break;
    case TensorProto::FLOAT16: case TensorProto::BFLOAT16:
      stored = proto.int32_data_size();
      for (int32_t v : proto.int32_data()) {
        tensor->floats.push_back(
            type == TensorProto::FLOAT16
                ? HalfToFloat(static_cast<uint16_t>(v))
                : BFloat16ToFloat(static_cast<uint16_t>(v)));
      }
      break;
    case TensorProto::INT64:
      stored = proto.int64_data_size();
      for (int64_t v : proto.int64_data()) {
        tensor->ints.push_back(ClampToInt32(v));
      }
      break;
    case TensorProto::UINT64: case TensorProto::UINT32:
      stored = proto.uint64_data_size();
      for (uint64_t v : proto.uint64_data()) {
        tensor->ints.push_back(
            ClampToInt32(static_cast<int64_t>(std::min<uint64_t>(v, INT64_MAX))));
      }
      break;
    default:  // int32, int16, int8, uint8, uint16, bool: int32_data
      stored = proto.int32_data_size();
      tensor->ints.assign(proto.int32_data().begin(),
                          proto.int32_data().end());
      break;
  }
  if (stored != count) {
    return InvalidArgs(what, ": ", stored, " values do not match its shape ",
                       ShapeToString(tensor->shape), " (", count,
                       " elements)");
  }
  return MaceStatus::MACE_SUCCESS;
}

int OnnxElemSize(int type) {
  switch (type) {
    case TensorProto::FLOAT: case TensorProto::INT32:
    case TensorProto::UINT32:
      return 4;
    case TensorProto::DOUBLE: case TensorProto::INT64:
    case TensorProto::UINT64:
      return 8;
    case TensorProto::FLOAT16: case TensorProto::BFLOAT16:
    case TensorProto::INT16: case TensorProto::UINT16:
      return 2;
    case TensorProto::INT8: case TensorProto::UINT8: case TensorProto::BOOL:
      return 1;
    default:
      return 0;
  }
}

}  // namespace converter
}  // namespace mace
