// LOG(severity) and VLOG(level) streams, filtered by MACE_CPP_MIN_LOG_LEVEL
// (0 INFO, 1 WARNING, 2 ERROR, 3 FATAL) and MACE_CPP_MIN_VLOG_LEVEL, or by
// the levels set through MaceEngineConfig. Nothing here aborts the process:
// FATAL only marks the severity of the message.

#ifndef MACE_CORE_LOGGING_H_
#define MACE_CORE_LOGGING_H_

#include <sstream>

namespace mace {
namespace logging {

enum Severity { INFO = 0, WARNING = 1, ERROR = 2, FATAL = 3 };

int MinLogLevel();
int MinVLogLevel();
// Overrides the environment for the whole process.
void SetMinLogLevel(int level);
void SetMinVLogLevel(int level);

// Collects one message and writes it to stderr when destroyed.
class LogMessage {
 public:
  LogMessage(const char *file, int line, int severity);
  ~LogMessage();
  std::ostream &stream() { return stream_; }

 private:
  const char *file_;
  int line_;
  int severity_;
  std::ostringstream stream_;
};

// Swallows a disabled message without evaluating its stream arguments.
struct Voidify {
  void operator&(std::ostream &) {}
};

}  // namespace logging
}  // namespace mace

#define LOG(severity)                                                   \
  (::mace::logging::severity < ::mace::logging::MinLogLevel())          \
      ? (void)0                                                         \
      : ::mace::logging::Voidify() &                                    \
            ::mace::logging::LogMessage(__FILE__, __LINE__,             \
                                        ::mace::logging::severity)      \
                .stream()

#define VLOG(level)                                                     \
  ((level) > ::mace::logging::MinVLogLevel())                           \
      ? (void)0                                                         \
      : ::mace::logging::Voidify() &                                    \
            ::mace::logging::LogMessage(__FILE__, __LINE__,             \
                                        ::mace::logging::INFO)          \
                .stream()

#endif  // MACE_CORE_LOGGING_H_
