// `mace run --benchmark`: the eight sections of MACE's model benchmark
// (warm-up, runs without and with statistics, ops by run order, the top 10
// by time, stats by op type, by MACs, and the sum of op times), from the
// latencies of the runs and the per-op RunMetadata of the profiled rounds.

#ifndef MACE_TOOLS_BENCHMARK_REPORT_H_
#define MACE_TOOLS_BENCHMARK_REPORT_H_

#include <ostream>
#include <vector>

#include "mace/model/mace.pb.h"
#include "mace/public/mace.h"

namespace mace {
namespace tools {

struct BenchmarkRecord {
  std::vector<double> warmup_ms;
  std::vector<double> plain_ms;            // rounds without statistics
  std::vector<double> profiled_ms;         // rounds with statistics
  std::vector<RunMetadata> profiled_ops;   // one per profiled round
};

// Op names are shown as the source model's nodes (`net` maps each op to
// the nodes fused into it).
void PrintBenchmarkReport(const NetDef &net, const BenchmarkRecord &record,
                          std::ostream &out);

}  // namespace tools
}  // namespace mace

#endif  // MACE_TOOLS_BENCHMARK_REPORT_H_
