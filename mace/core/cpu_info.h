// What the host CPU offers: core count, per-core max frequency, ISA features.

#ifndef MACE_CORE_CPU_INFO_H_
#define MACE_CORE_CPU_INFO_H_

#include <vector>

namespace mace {

struct CpuFeatures {
  bool avx2 = false;
  bool fma = false;
  bool avx512f = false;
  bool avx512bw = false;
  bool avx512vl = false;
  bool avx512dq = false;
  bool avx512vnni = false;
  bool neon = false;
  bool dotprod = false;
  // x86 CPUID's hypervisor bit: a guest of a virtual machine, whose host
  // may run something else in a spinning vCPU's place (thread_pool.cc).
  bool hypervisor = false;
};

// Detected once, then cached.
const CpuFeatures &GetCpuFeatures();

int GetCpuCount();

// Max frequency (kHz) per core id from sysfs; cores whose frequency cannot
// be read get 0. Size equals GetCpuCount().
std::vector<int> GetCpuMaxFrequencies();

}  // namespace mace

#endif  // MACE_CORE_CPU_INFO_H_
