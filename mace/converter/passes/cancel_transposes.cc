#include <map>
#include <string>
#include <utility>
#include <vector>

#include "mace/converter/passes/graph_utils.h"
#include "mace/converter/passes/passes.h"
#include "mace/core/status.h"

namespace mace {
namespace converter {

MaceStatus CancelTransposes(GraphBuilder *graph) {
  std::vector<OperatorDef> &ops = *graph->mutable_ops();
  for (size_t i = 0; i < ops.size(); ++i) {
    if (ops[i].type() != "Transpose" || ops[i].input_size() != 1) continue;
    const int producer = ProducerOf(ops, ops[i].input(0));
    if (producer < 0 || ops[producer].type() != "Transpose" ||
        ops[producer].input_size() != 1) {
      continue;
    }
    const std::vector<int64_t> first = IntsArg(ops[producer], "dims");
    const std::vector<int64_t> second = IntsArg(ops[i], "dims");
    if (first.size() != second.size() || first.empty()) continue;
    // out[d] = mid[second[d]] = in[first[second[d]]].
    std::vector<int64_t> combined(second.size());
    bool identity = true;
    for (size_t d = 0; d < second.size(); ++d) {
      combined[d] = first[second[d]];
      identity = identity && combined[d] == static_cast<int64_t>(d);
    }
    ops[i].set_input(0, ops[producer].input(0));
    if (identity) {
      // SimplifyReshapes rewires the Identity's consumers away.
      ops[i].set_type("Identity");
      ops[i].clear_arg();
    } else {
      SetIntsArg(&ops[i], "dims", combined);
    }
    MACE_RETURN_IF_ERROR(graph->Reinfer(i));
  }
  // Transposes of one tensor by one permutation are one: the frontends
  // wrap each NHWC op that reads a tensor in a transpose of its own (a
  // graph input read by two convolutions was transposed twice). Readers of
  // the later ones read the first; the later ones are left unused.
  std::map<std::pair<std::string, std::vector<int64_t>>, std::string> first;
  for (const OperatorDef &op : ops) {
    if (op.type() != "Transpose" || op.input_size() != 1 ||
        op.output_size() != 1) {
      continue;
    }
    const auto key = std::make_pair(op.input(0), IntsArg(op, "dims"));
    auto [it, inserted] = first.emplace(key, op.output(0));
    if (!inserted && !graph->IsGraphOutput(op.output(0))) {
      ReplaceUses(&ops, op.output(0), it->second);
    }
  }
  return MaceStatus::MACE_SUCCESS;
}

}  // namespace converter
}  // namespace mace
