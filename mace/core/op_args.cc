#include "mace/core/op_args.h"

#include <limits>

#include "mace/core/status.h"

namespace mace {
namespace {

// An argument "has a list" when it carries repeated values; an empty list
// is legitimately written as an argument with no value at all.
bool HasScalar(const Argument &arg) {
  return arg.has_i() || arg.has_f() || arg.has_s();
}

const char *KindOf(const Argument &arg) {
  if (arg.has_i()) return "int";
  if (arg.has_f()) return "float";
  if (arg.has_s()) return "string";
  if (arg.ints_size() > 0) return "int list";
  if (arg.floats_size() > 0) return "float list";
  return "empty";
}

}  // namespace

const Argument *OpArgs::Find(const std::string &name) const {
  for (const Argument &arg : def_.arg()) {
    if (arg.name() == name) return &arg;
  }
  return nullptr;
}

bool OpArgs::Has(const std::string &name) const {
  return Find(name) != nullptr;
}

MaceStatus OpArgs::WrongKind(const Argument &arg, const char *expected) const {
  return InvalidArgs("op '", def_.name(), "' (", def_.type(), "): argument '",
                     arg.name(), "' should be ", expected, " but is ",
                     KindOf(arg));
}

MaceStatus OpArgs::GetInt(const std::string &name, int64_t default_value,
                          int64_t *value) const {
  const Argument *arg = Find(name);
  if (arg == nullptr) {
    *value = default_value;
    return MaceStatus::MACE_SUCCESS;
  }
  if (!arg->has_i()) return WrongKind(*arg, "an int");
  *value = arg->i();
  return MaceStatus::MACE_SUCCESS;
}

MaceStatus OpArgs::GetInt(const std::string &name, int default_value,
                          int *value) const {
  int64_t wide = 0;
  MACE_RETURN_IF_ERROR(GetInt(name, int64_t{default_value}, &wide));
  if (wide < std::numeric_limits<int>::min() ||
      wide > std::numeric_limits<int>::max()) {
    return InvalidArgs("op '", def_.name(), "' (", def_.type(),
                       "): argument '", name, "' = ", wide,
                       " is out of the int32 range");
  }
  *value = static_cast<int>(wide);
  return MaceStatus::MACE_SUCCESS;
}

MaceStatus OpArgs::GetBool(const std::string &name, bool default_value,
                           bool *value) const {
  int64_t wide = 0;
  MACE_RETURN_IF_ERROR(GetInt(name, int64_t{default_value ? 1 : 0}, &wide));
  *value = wide != 0;
  return MaceStatus::MACE_SUCCESS;
}

MaceStatus OpArgs::GetFloat(const std::string &name, float default_value,
                            float *value) const {
  const Argument *arg = Find(name);
  if (arg == nullptr) {
    *value = default_value;
    return MaceStatus::MACE_SUCCESS;
  }
  if (arg->has_f()) {
    *value = arg->f();
  } else if (arg->has_i()) {
    *value = static_cast<float>(arg->i());
  } else {
    return WrongKind(*arg, "a float");
  }
  return MaceStatus::MACE_SUCCESS;
}

MaceStatus OpArgs::GetString(const std::string &name,
                             const std::string &default_value,
                             std::string *value) const {
  const Argument *arg = Find(name);
  if (arg == nullptr) {
    *value = default_value;
    return MaceStatus::MACE_SUCCESS;
  }
  if (!arg->has_s()) return WrongKind(*arg, "a string");
  *value = arg->s();
  return MaceStatus::MACE_SUCCESS;
}

MaceStatus OpArgs::GetInts(const std::string &name,
                           const std::vector<int64_t> &default_value,
                           std::vector<int64_t> *value) const {
  const Argument *arg = Find(name);
  if (arg == nullptr) {
    *value = default_value;
    return MaceStatus::MACE_SUCCESS;
  }
  if (HasScalar(*arg) || arg->floats_size() > 0) {
    return WrongKind(*arg, "an int list");
  }
  value->assign(arg->ints().begin(), arg->ints().end());
  return MaceStatus::MACE_SUCCESS;
}

MaceStatus OpArgs::GetInts(const std::string &name,
                           const std::vector<int> &default_value,
                           std::vector<int> *value) const {
  std::vector<int64_t> wide;
  MACE_RETURN_IF_ERROR(GetInts(
      name, std::vector<int64_t>(default_value.begin(), default_value.end()),
      &wide));
  value->clear();
  for (int64_t v : wide) {
    if (v < std::numeric_limits<int>::min() ||
        v > std::numeric_limits<int>::max()) {
      return InvalidArgs("op '", def_.name(), "' (", def_.type(),
                         "): argument '", name, "' has value ", v,
                         " out of the int32 range");
    }
    value->push_back(static_cast<int>(v));
  }
  return MaceStatus::MACE_SUCCESS;
}

MaceStatus OpArgs::GetFloats(const std::string &name,
                             const std::vector<float> &default_value,
                             std::vector<float> *value) const {
  const Argument *arg = Find(name);
  if (arg == nullptr) {
    *value = default_value;
    return MaceStatus::MACE_SUCCESS;
  }
  if (HasScalar(*arg)) return WrongKind(*arg, "a float list");
  if (arg->floats_size() > 0) {
    value->assign(arg->floats().begin(), arg->floats().end());
  } else {
    value->assign(arg->ints().begin(), arg->ints().end());
  }
  return MaceStatus::MACE_SUCCESS;
}

}  // namespace mace
