// Helpers to build and pass on MaceStatus errors with messages that name
// what was wrong.

#ifndef MACE_CORE_STATUS_H_
#define MACE_CORE_STATUS_H_

#include <new>
#include <sstream>
#include <stdexcept>
#include <string>
#include <utility>

#include "mace/public/mace.h"

namespace mace {

namespace status_internal {
inline void Append(std::ostringstream *) {}
template <typename T, typename... Rest>
void Append(std::ostringstream *out, const T &first, const Rest &...rest) {
  *out << first;
  Append(out, rest...);
}
}  // namespace status_internal

// Concatenates the pieces of a message with operator<<.
template <typename... Pieces>
std::string StrCat(const Pieces &...pieces) {
  std::ostringstream out;
  status_internal::Append(&out, pieces...);
  return out.str();
}

template <typename... Pieces>
MaceStatus InvalidArgs(const Pieces &...pieces) {
  return MaceStatus(MaceStatus::MACE_INVALID_ARGS, StrCat(pieces...));
}
template <typename... Pieces>
MaceStatus Unsupported(const Pieces &...pieces) {
  return MaceStatus(MaceStatus::MACE_UNSUPPORTED, StrCat(pieces...));
}
template <typename... Pieces>
MaceStatus RuntimeError(const Pieces &...pieces) {
  return MaceStatus(MaceStatus::MACE_RUNTIME_ERROR, StrCat(pieces...));
}
template <typename... Pieces>
MaceStatus OutOfResources(const Pieces &...pieces) {
  return MaceStatus(MaceStatus::MACE_OUT_OF_RESOURCES, StrCat(pieces...));
}

// Runs `fn`, turning a std::bad_alloc or std::length_error thrown inside
// it (a container of the engine outgrowing the machine, or asked for more
// elements than it can hold, for a model whose sizes are absurd) into
// MACE_OUT_OF_RESOURCES: at the API's edge, so that no allocation ends the
// caller's process.
template <typename Fn>
MaceStatus OutOfMemoryAsStatus(const std::string &what, Fn &&fn) {
  try {
    return fn();
  } catch (const std::bad_alloc &) {
    return OutOfResources(what, ": out of memory");
  } catch (const std::length_error &) {
    return OutOfResources(what, ": a size beyond what memory can hold");
  }
}

// Prefixes the message of a failed status with context ("op conv1: ").
MaceStatus WithContext(const MaceStatus &status, const std::string &context);

}  // namespace mace

// Returns from the enclosing function when `expr` is not MACE_SUCCESS.
#define MACE_RETURN_IF_ERROR(expr)                                      \
  do {                                                                  \
    ::mace::MaceStatus mace_status_ = (expr);                           \
    if (mace_status_.code() != ::mace::MaceStatus::MACE_SUCCESS) {      \
      return mace_status_;                                              \
    }                                                                   \
  } while (0)

#endif  // MACE_CORE_STATUS_H_
