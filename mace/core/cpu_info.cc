#include "mace/core/cpu_info.h"

#include <unistd.h>

#include <cstdint>
#include <fstream>
#include <string>
#include <thread>

#if defined(__x86_64__) || defined(__i386__)
#include <cpuid.h>
#endif

#if defined(__aarch64__) && defined(__linux__)
#include <sys/auxv.h>
#endif

namespace mace {
namespace {

#if defined(__x86_64__) || defined(__i386__)

// Reads XCR0: which register states the OS saves on a context switch. A CPU
// may offer AVX or AVX-512 while the kernel does not enable them, and then
// the instructions fault, so both the CPU and the OS must agree.
uint64_t ReadXcr0() {
  uint32_t eax = 0;
  uint32_t edx = 0;
  // Raw opcode instead of _xgetbv() so this file needs no -mxsave.
  __asm__ volatile(".byte 0x0f, 0x01, 0xd0" : "=a"(eax), "=d"(edx) : "c"(0));
  return (static_cast<uint64_t>(edx) << 32) | eax;
}

CpuFeatures DetectFeatures() {
  CpuFeatures features;
  unsigned eax = 0, ebx = 0, ecx = 0, edx = 0;
  const unsigned max_leaf = __get_cpuid_max(0, nullptr);
  if (max_leaf < 1) return features;
  __cpuid_count(1, 0, eax, ebx, ecx, edx);
  features.hypervisor = (ecx >> 31) & 1;
  const bool cpu_fma = (ecx >> 12) & 1;
  const bool osxsave = (ecx >> 27) & 1;
  const bool cpu_avx = (ecx >> 28) & 1;
  if (!osxsave || !cpu_avx) return features;

  const uint64_t xcr0 = ReadXcr0();
  constexpr uint64_t kSseAvxState = 0x6;  // XMM | YMM upper halves.
  // Opmask, upper halves of ZMM0-15, ZMM16-31.
  constexpr uint64_t kAvx512State = 0xE0;
  const bool os_avx = (xcr0 & kSseAvxState) == kSseAvxState;
  const bool os_avx512 = os_avx && (xcr0 & kAvx512State) == kAvx512State;
  if (!os_avx) return features;
  features.fma = cpu_fma;

  if (max_leaf < 7) return features;
  __cpuid_count(7, 0, eax, ebx, ecx, edx);
  features.avx2 = (ebx >> 5) & 1;
  if (os_avx512) {
    features.avx512f = (ebx >> 16) & 1;
    features.avx512dq = features.avx512f && ((ebx >> 17) & 1);
    features.avx512bw = features.avx512f && ((ebx >> 30) & 1);
    features.avx512vl = features.avx512f && ((ebx >> 31) & 1);
    features.avx512vnni = features.avx512f && ((ecx >> 11) & 1);
  }
  return features;
}

#elif defined(__aarch64__)

CpuFeatures DetectFeatures() {
  CpuFeatures features;
  // Advanced SIMD is mandatory in ARMv8-A.
  features.neon = true;
#if defined(__linux__)
  // HWCAP_ASIMDDP from <asm/hwcap.h>, spelled out because old kernel headers
  // lack it while the kernel still reports it.
  constexpr unsigned long kHwcapAsimdDp = 1UL << 20;
  features.dotprod = (getauxval(AT_HWCAP) & kHwcapAsimdDp) != 0;
#endif
  return features;
}

#else

CpuFeatures DetectFeatures() { return CpuFeatures(); }

#endif

}  // namespace

const CpuFeatures &GetCpuFeatures() {
  static const CpuFeatures features = DetectFeatures();
  return features;
}

int GetCpuCount() {
  // Configured rather than online cores: core ids index sysfs, and an
  // offline core keeps its id.
  long count = sysconf(_SC_NPROCESSORS_CONF);
  if (count < 1) count = static_cast<long>(std::thread::hardware_concurrency());
  return count < 1 ? 1 : static_cast<int>(count);
}

std::vector<int> GetCpuMaxFrequencies() {
  const int count = GetCpuCount();
  std::vector<int> freqs(count, 0);
  for (int cpu = 0; cpu < count; ++cpu) {
    std::ifstream file("/sys/devices/system/cpu/cpu" + std::to_string(cpu) +
                       "/cpufreq/cpuinfo_max_freq");
    int khz = 0;
    if (file >> khz && khz > 0) freqs[cpu] = khz;
  }
  return freqs;
}

}  // namespace mace
