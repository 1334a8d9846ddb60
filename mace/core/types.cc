#include "mace/core/types.h"

namespace mace {

int DataTypeSize(DataType type) {
  switch (type) {
    case DT_FLOAT:
    case DT_INT32:
    case DT_UINT32:
      return 4;
    case DT_HALF:
    case DT_FLOAT16:
    case DT_BFLOAT16:
    case DT_INT16:
    case DT_UINT16:
      return 2;
    case DT_UINT8:
    case DT_INT8:
    case DT_BOOL:
      return 1;
    default:
      return 0;
  }
}

std::string DataTypeName(DataType type) {
  return DataType_IsValid(type) ? DataType_Name(type)
                                : "DT_<" + std::to_string(type) + ">";
}

}  // namespace mace
