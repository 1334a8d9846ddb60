// What the kernel says of this process's mappings (/proc/self/smaps), for
// tests of how memory is mapped.

#ifndef MACE_TESTS_COMMON_MEMORY_MAPS_H_
#define MACE_TESTS_COMMON_MEMORY_MAPS_H_

namespace mace {
namespace test {

// kB of transparent huge pages in the mapping that holds `address`; -1
// where that cannot be read (no /proc, or no such mapping).
long AnonHugePagesKb(const void *address);

}  // namespace test
}  // namespace mace

#endif  // MACE_TESTS_COMMON_MEMORY_MAPS_H_
