#include "tests/common/memory_maps.h"

#if defined(__linux__)
#include <sys/mman.h>
#include <unistd.h>
#endif

#include <cstdint>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

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

long ResidentPages(const void *address, size_t bytes) {
#if defined(__linux__)
  const long page_size = sysconf(_SC_PAGESIZE);
  if (page_size <= 0 || bytes == 0) return -1;
  const uintptr_t page = static_cast<uintptr_t>(page_size);
  const uintptr_t begin = reinterpret_cast<uintptr_t>(address) / page * page;
  const uintptr_t end =
      (reinterpret_cast<uintptr_t>(address) + bytes + page - 1) / page * page;
  std::vector<unsigned char> resident((end - begin) / page);
  if (mincore(reinterpret_cast<void *>(begin), end - begin,
              resident.data()) != 0) {
    return -1;
  }
  long count = 0;
  for (unsigned char flags : resident) count += flags & 1;
  return count;
#else
  (void)address;
  (void)bytes;
  return -1;
#endif
}

bool PopulateWriteMapsPages() {
#if defined(__linux__) && defined(MADV_POPULATE_WRITE)
  constexpr size_t kBytes = 16 * 4096;
  void *mapped = mmap(nullptr, kBytes, PROT_READ | PROT_WRITE,
                      MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (mapped == MAP_FAILED) return false;
  const bool maps = madvise(mapped, kBytes, MADV_POPULATE_WRITE) == 0 &&
                    ResidentPages(mapped, kBytes) ==
                        static_cast<long>(kBytes / sysconf(_SC_PAGESIZE));
  munmap(mapped, kBytes);
  return maps;
#else
  return false;
#endif
}

}  // namespace test
}  // namespace mace
