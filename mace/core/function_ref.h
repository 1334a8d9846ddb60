// A non-owning reference to a callable, like C++26 std::function_ref: it
// never allocates, so passing a lambda with many captures to a hot-path
// API (ThreadPool::ParallelFor inside Run) costs nothing. The callable
// must outlive the reference, which holds for a call's duration.

#ifndef MACE_CORE_FUNCTION_REF_H_
#define MACE_CORE_FUNCTION_REF_H_

#include <type_traits>
#include <utility>

namespace mace {

template <typename Signature>
class FunctionRef;

template <typename Result, typename... Args>
class FunctionRef<Result(Args...)> {
 public:
  template <typename Callable,
            typename = std::enable_if_t<!std::is_same<
                std::decay_t<Callable>, FunctionRef>::value>>
  FunctionRef(Callable &&callable)  // NOLINT: implicit like std::function
      : object_(const_cast<void *>(
            static_cast<const void *>(std::addressof(callable)))),
        invoke_([](void *object, Args... args) -> Result {
          return (*static_cast<std::remove_reference_t<Callable> *>(object))(
              std::forward<Args>(args)...);
        }) {}

  Result operator()(Args... args) const {
    return invoke_(object_, std::forward<Args>(args)...);
  }

 private:
  void *object_;
  Result (*invoke_)(void *, Args...);
};

}  // namespace mace

#endif  // MACE_CORE_FUNCTION_REF_H_
