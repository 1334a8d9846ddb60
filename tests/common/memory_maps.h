// What the kernel says of this process's mappings (/proc/self/smaps), for
// tests of how memory is mapped.

#ifndef MACE_TESTS_COMMON_MEMORY_MAPS_H_
#define MACE_TESTS_COMMON_MEMORY_MAPS_H_

#include <cstddef>

namespace mace {
namespace test {

// kB of transparent huge pages in the mapping that holds `address`; -1
// where that cannot be read (no /proc, or no such mapping).
long AnonHugePagesKb(const void *address);

// How many of the pages holding [address, address + bytes) are mapped
// (mincore); -1 where that cannot be asked.
long ResidentPages(const void *address, size_t bytes);

// Whether madvise(MADV_POPULATE_WRITE) maps the pages of a fresh mapping,
// as seen by ResidentPages.
bool PopulateWriteMapsPages();

}  // namespace test
}  // namespace mace

#endif  // MACE_TESTS_COMMON_MEMORY_MAPS_H_
