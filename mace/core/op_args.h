// Typed, checked access to an OperatorDef's arguments. A missing argument
// takes its default; an argument of the wrong kind (a float where an int is
// expected, a list where a scalar is) is an error naming op and argument.

#ifndef MACE_CORE_OP_ARGS_H_
#define MACE_CORE_OP_ARGS_H_

#include <cstdint>
#include <string>
#include <vector>

#include "mace/model/mace.pb.h"
#include "mace/public/mace.h"

namespace mace {

class OpArgs {
 public:
  explicit OpArgs(const OperatorDef &def) : def_(def) {}

  bool Has(const std::string &name) const;

  MaceStatus GetInt(const std::string &name, int64_t default_value,
                    int64_t *value) const;
  MaceStatus GetInt(const std::string &name, int default_value,
                    int *value) const;
  MaceStatus GetBool(const std::string &name, bool default_value,
                     bool *value) const;
  // Accepts an int argument too (written as `i`), since converters differ.
  MaceStatus GetFloat(const std::string &name, float default_value,
                      float *value) const;
  MaceStatus GetString(const std::string &name,
                       const std::string &default_value,
                       std::string *value) const;
  MaceStatus GetInts(const std::string &name,
                     const std::vector<int64_t> &default_value,
                     std::vector<int64_t> *value) const;
  MaceStatus GetInts(const std::string &name,
                     const std::vector<int> &default_value,
                     std::vector<int> *value) const;
  MaceStatus GetFloats(const std::string &name,
                       const std::vector<float> &default_value,
                       std::vector<float> *value) const;

  const OperatorDef &def() const { return def_; }

 private:
  const Argument *Find(const std::string &name) const;
  MaceStatus WrongKind(const Argument &arg, const char *expected) const;

  const OperatorDef &def_;
};

}  // namespace mace

#endif  // MACE_CORE_OP_ARGS_H_
