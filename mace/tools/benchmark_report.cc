#include "mace/tools/benchmark_report.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <numeric>
#include <string>

#include "mace/model/op_provenance.h"
#include "mace/tools/command.h"
#include "mace/tools/table.h"

namespace mace {
namespace tools {
namespace {

std::string Ms(double value) { return FormatFixed(value, 3); }

double Mean(const std::vector<double> &values) {
  if (values.empty()) return 0.0;
  return std::accumulate(values.begin(), values.end(), 0.0) /
         static_cast<double>(values.size());
}

double StdDev(const std::vector<double> &values) {
  if (values.size() < 2) return 0.0;
  const double mean = Mean(values);
  double sum = 0.0;
  for (double v : values) sum += (v - mean) * (v - mean);
  return std::sqrt(sum / static_cast<double>(values.size()));
}

// "round | first | curr | min | max | avg | std" of a series of runs.
void PrintSeries(const std::string &title, const std::vector<double> &ms,
                 std::ostream &out) {
  Table table({"round", "first(ms)", "curr(ms)", "min(ms)", "max(ms)",
               "avg(ms)", "std"},
              {});
  if (!ms.empty()) {
    const auto [low, high] = std::minmax_element(ms.begin(), ms.end());
    table.AddRow({std::to_string(ms.size()), Ms(ms.front()), Ms(ms.back()),
                  Ms(*low), Ms(*high), Ms(Mean(ms)), Ms(StdDev(ms))});
  }
  table.PrintBoxed(title, out);
  out << "\n";
}

// One op across the profiled rounds.
struct OpProfile {
  const OperatorStats *stats = nullptr;  // of the first profiled round
  std::string name;                      // with the fused source nodes
  double start_ms = 0.0;                 // mean start within its round
  double first_ms = 0.0;
  double avg_ms = 0.0;
  // The op's fastest round: on a shared host, its own cost, which the
  // average mixes with what other processes took from it (a comparison of
  // engines layer by layer wants the same statistic of both).
  double min_ms = 0.0;
};

std::string IntsText(const std::vector<int> &values) {
  if (values.empty()) return "";
  std::string text = "[";
  for (size_t i = 0; i < values.size(); ++i) {
    text += (i ? ", " : "") + std::to_string(values[i]);
  }
  return text + "]";
}

std::string PadText(const ConvPoolArgs &args) {
  if (!args.paddings.empty()) return IntsText(args.paddings);
  switch (args.padding_type) {
    case 0: return "VALID";
    case 1: return "SAME";
    case 2: return "FULL";
    default: return "";
  }
}

std::string OutputShapes(const OperatorStats &stats) {
  std::string text;
  for (const auto &shape : stats.output_shape) {
    text += (text.empty() ? "" : " ") + DimsString(shape);
  }
  return text;
}

double Gmacps(int64_t macs, double ms) {
  return ms > 0.0 ? static_cast<double>(macs) / (ms * 1e6) : 0.0;
}

std::vector<OpProfile> ProfileOps(const NetDef &net,
                                  const BenchmarkRecord &record) {
  std::map<std::string, const OperatorDef *> defs;
  for (const OperatorDef &def : net.op()) defs[def.name()] = &def;
  std::vector<OpProfile> ops;
  if (record.profiled_ops.empty()) return ops;
  const std::vector<OperatorStats> &first = record.profiled_ops[0].op_stats;
  ops.resize(first.size());
  for (size_t i = 0; i < first.size(); ++i) {
    OpProfile &op = ops[i];
    op.stats = &first[i];
    auto def = defs.find(first[i].operator_name);
    op.name = def != defs.end() ? DescribeSourceNodes(*def->second)
                                : first[i].operator_name;
  }
  size_t rounds = 0;
  for (const RunMetadata &round : record.profiled_ops) {
    // Rounds of the same engine run the same ops; a mismatch would mean a
    // different model, which the caller never passes.
    if (round.op_stats.size() != ops.size() || round.op_stats.empty()) continue;
    const int64_t origin = round.op_stats.front().stats.start_micros;
    for (size_t i = 0; i < ops.size(); ++i) {
      const CallStats &call = round.op_stats[i].stats;
      const double ms = (call.end_micros - call.start_micros) / 1000.0;
      if (rounds == 0) ops[i].first_ms = ms;
      ops[i].min_ms = rounds == 0 ? ms : std::min(ops[i].min_ms, ms);
      ops[i].avg_ms += ms;
      ops[i].start_ms += (call.start_micros - origin) / 1000.0;
    }
    ++rounds;
  }
  for (OpProfile &op : ops) {
    op.avg_ms /= static_cast<double>(std::max<size_t>(rounds, 1));
    op.start_ms /= static_cast<double>(std::max<size_t>(rounds, 1));
  }
  return ops;
}

void PrintOps(const std::string &title, const std::vector<OpProfile> &ops,
              double total_ms, std::ostream &out) {
  Table table({"Op Type", "Start", "First", "Avg(ms)", "Min(ms)", "%", "cdf%",
               "GMACPS", "Stride", "Pad", "Filter Shape", "Output Shape",
               "Dilation", "name"},
              {false, false, false, false, false, false, false, false, true,
               true, true, true, true, true});
  double cdf = 0.0;
  for (const OpProfile &op : ops) {
    const double percent = total_ms > 0.0 ? 100.0 * op.avg_ms / total_ms : 0;
    cdf += percent;
    const OperatorStats &s = *op.stats;
    std::vector<int> kernels(s.args.kernels.begin(), s.args.kernels.end());
    table.AddRow({s.type, Ms(op.start_ms), Ms(op.first_ms), Ms(op.avg_ms),
                  Ms(op.min_ms), FormatFixed(percent, 3), FormatFixed(cdf, 3),
                  FormatFixed(Gmacps(s.macs, op.avg_ms), 3),
                  IntsText(s.args.strides), PadText(s.args),
                  IntsText(kernels), OutputShapes(s),
                  IntsText(s.args.dilations), op.name});
  }
  table.PrintBoxed(title, out);
  out << "\n";
}

void PrintByType(const std::vector<OpProfile> &ops, double total_ms,
                 size_t rounds, std::ostream &out) {
  struct TypeStat {
    int count = 0;
    double avg_ms = 0.0;
    int64_t macs = 0;
  };
  std::map<std::string, TypeStat> by_type;
  for (const OpProfile &op : ops) {
    TypeStat &stat = by_type[op.stats->type];
    ++stat.count;
    stat.avg_ms += op.avg_ms;
    stat.macs += op.stats->macs;
  }
  std::vector<std::pair<std::string, TypeStat>> sorted(by_type.begin(),
                                                       by_type.end());
  std::stable_sort(sorted.begin(), sorted.end(),
                   [](const auto &a, const auto &b) {
                     return a.second.avg_ms > b.second.avg_ms;
                   });
  Table table({"Op Type", "Count", "Avg(ms)", "%", "cdf%", "MACs", "GMACPS",
               "Called times"},
              {});
  double cdf = 0.0;
  for (const auto &[type, stat] : sorted) {
    const double percent =
        total_ms > 0.0 ? 100.0 * stat.avg_ms / total_ms : 0.0;
    cdf += percent;
    table.AddRow({type, std::to_string(stat.count), Ms(stat.avg_ms),
                  FormatFixed(percent, 3), FormatFixed(cdf, 3),
                  WithThousands(stat.macs),
                  FormatFixed(Gmacps(stat.macs, stat.avg_ms), 3),
                  std::to_string(stat.count * rounds)});
  }
  table.PrintBoxed("Stat by Op Type", out);
  out << "\n";
}

// Per profiled round: the sum of its op times.
std::vector<double> OpTimeSums(const BenchmarkRecord &record) {
  std::vector<double> sums;
  for (const RunMetadata &round : record.profiled_ops) {
    double sum = 0.0;
    for (const OperatorStats &op : round.op_stats) {
      sum += (op.stats.end_micros - op.stats.start_micros) / 1000.0;
    }
    sums.push_back(sum);
  }
  return sums;
}

void PrintByMacs(const std::vector<OpProfile> &ops,
                 const std::vector<double> &sums, std::ostream &out) {
  int64_t total = 0;
  for (const OpProfile &op : ops) total += op.stats->macs;
  std::vector<double> rates;
  for (double ms : sums) rates.push_back(Gmacps(total, ms));
  Table table({"total", "round", "first(G/s)", "avg(G/s)", "std"}, {});
  table.AddRow({WithThousands(total), std::to_string(rates.size()),
                FormatFixed(rates.empty() ? 0.0 : rates.front(), 3),
                FormatFixed(Mean(rates), 3), FormatFixed(StdDev(rates), 3)});
  table.PrintBoxed("Stat by MACs (Multiply-Accumulation)", out);
  out << "\n";
}

}  // namespace

void PrintBenchmarkReport(const NetDef &net, const BenchmarkRecord &record,
                          std::ostream &out) {
  PrintSeries("Warm Up", record.warmup_ms, out);
  PrintSeries("Run without statistics", record.plain_ms, out);
  PrintSeries("Run with statistics", record.profiled_ms, out);

  const std::vector<OpProfile> ops = ProfileOps(net, record);
  double total_ms = 0.0;
  for (const OpProfile &op : ops) total_ms += op.avg_ms;
  PrintOps("Sort by Run Order", ops, total_ms, out);

  std::vector<OpProfile> by_time = ops;
  std::stable_sort(by_time.begin(), by_time.end(),
                   [](const OpProfile &a, const OpProfile &b) {
                     return a.avg_ms > b.avg_ms;
                   });
  if (by_time.size() > 10) by_time.resize(10);
  PrintOps("Sort by Computation Time", by_time, total_ms, out);

  PrintByType(ops, total_ms, record.profiled_ops.size(), out);
  const std::vector<double> sums = OpTimeSums(record);
  PrintByMacs(ops, sums, out);
  PrintSeries("Summary of Ops' Stat", sums, out);
}

}  // namespace tools
}  // namespace mace
