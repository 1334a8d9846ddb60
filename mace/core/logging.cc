#include "mace/core/logging.h"

#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <cstring>

namespace mace {
namespace logging {
namespace {

constexpr int kUnset = -1000;
std::atomic<int> g_min_log_level{kUnset};
std::atomic<int> g_min_vlog_level{kUnset};

int ReadLevelFromEnv(const char *name, int fallback) {
  const char *value = std::getenv(name);
  if (value == nullptr || *value == '\0') return fallback;
  char *end = nullptr;
  long parsed = std::strtol(value, &end, 10);
  return (end != nullptr && *end == '\0') ? static_cast<int>(parsed)
                                          : fallback;
}

int LevelOrEnv(std::atomic<int> *level, const char *env_name) {
  int current = level->load(std::memory_order_relaxed);
  if (current == kUnset) {
    current = ReadLevelFromEnv(env_name, 0);
    int expected = kUnset;
    level->compare_exchange_strong(expected, current);
    current = level->load(std::memory_order_relaxed);
  }
  return current;
}

const char *SeverityName(int severity) {
  static const char *const kNames[] = {"I", "W", "E", "F"};
  return (severity >= 0 && severity <= FATAL) ? kNames[severity] : "?";
}

}  // namespace

int MinLogLevel() {
  return LevelOrEnv(&g_min_log_level, "MACE_CPP_MIN_LOG_LEVEL");
}
int MinVLogLevel() {
  return LevelOrEnv(&g_min_vlog_level, "MACE_CPP_MIN_VLOG_LEVEL");
}
void SetMinLogLevel(int level) { g_min_log_level.store(level); }
void SetMinVLogLevel(int level) { g_min_vlog_level.store(level); }

LogMessage::LogMessage(const char *file, int line, int severity)
    : file_(file), line_(line), severity_(severity) {}

LogMessage::~LogMessage() {
  const char *base = std::strrchr(file_, '/');
  std::fprintf(stderr, "%s %s:%d] %s\n", SeverityName(severity_),
               base ? base + 1 : file_, line_, stream_.str().c_str());
}

}  // namespace logging
}  // namespace mace
