// Element types inside the engine and their sizes.

#ifndef MACE_CORE_TYPES_H_
#define MACE_CORE_TYPES_H_

#include <cstdint>
#include <string>

#include "mace/model/mace.pb.h"

namespace mace {

// Bytes per element, 0 for types the engine cannot hold.
int DataTypeSize(DataType type);
std::string DataTypeName(DataType type);

template <typename T>
struct DataTypeOf;
template <>
struct DataTypeOf<float> {
  static constexpr DataType value = DT_FLOAT;
};
template <>
struct DataTypeOf<int32_t> {
  static constexpr DataType value = DT_INT32;
};
template <>
struct DataTypeOf<uint8_t> {
  static constexpr DataType value = DT_UINT8;
};

}  // namespace mace

#endif  // MACE_CORE_TYPES_H_
