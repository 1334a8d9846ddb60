#include "mace/core/operation.h"

namespace mace {

MaceStatus OpContext::ExpectInputCount(int min_count, int max_count) const {
  if (num_inputs() < min_count || num_inputs() > max_count) {
    if (min_count == max_count) {
      return InvalidArgs("expects ", min_count, " inputs, got ",
                         num_inputs());
    }
    return InvalidArgs("expects ", min_count, " to ", max_count,
                       " inputs, got ", num_inputs());
  }
  return MaceStatus::MACE_SUCCESS;
}

MaceStatus OpContext::ExpectOutputCount(int count) const {
  if (num_outputs() != count) {
    return InvalidArgs("expects ", count, " outputs, got ", num_outputs());
  }
  return MaceStatus::MACE_SUCCESS;
}

MaceStatus OpContext::ExpectRank(int input_index, int rank) const {
  const Tensor &t = input(input_index);
  if (t.rank() != rank) {
    return InvalidArgs("input ", input_index, " '", t.name(), "' must have rank ",
                       rank, ", has shape ", ShapeToString(t.shape()));
  }
  return MaceStatus::MACE_SUCCESS;
}

MaceStatus OpContext::ExpectDtype(int input_index, DataType dtype) const {
  const Tensor &t = input(input_index);
  if (t.dtype() != dtype) {
    return InvalidArgs("input ", input_index, " '", t.name(), "' must be ",
                       DataTypeName(dtype), ", is ", DataTypeName(t.dtype()));
  }
  return MaceStatus::MACE_SUCCESS;
}

MaceStatus OpContext::ExpectConstant(int input_index) const {
  const Tensor &t = input(input_index);
  if (!t.has_data()) {
    return Unsupported("input ", input_index, " '", t.name(),
                       "' must be known at init (a constant or computed "
                       "from shapes only)");
  }
  return MaceStatus::MACE_SUCCESS;
}

}  // namespace mace
