#include "tests/common/memory_maps.h"

#include <cstdint>
#include <fstream>
#include <sstream>
#include <string>

namespace mace {
namespace test {

long AnonHugePagesKb(const void *address) {
  std::ifstream smaps("/proc/self/smaps");
  const uintptr_t at = reinterpret_cast<uintptr_t>(address);
  std::string line;
  bool inside = false;
  while (std::getline(smaps, line)) {
    uintptr_t begin = 0, end = 0;
    char dash = 0;
    std::istringstream range(line);
    if (range >> std::hex >> begin >> dash >> end && dash == '-') {
      inside = begin <= at && at < end;
      continue;
    }
    constexpr char kField[] = "AnonHugePages:";
    if (inside && line.rfind(kField, 0) == 0) {
      return std::stol(line.substr(sizeof(kField) - 1));
    }
  }
  return -1;
}

}  // namespace test
}  // namespace mace
