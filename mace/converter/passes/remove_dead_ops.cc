// Drops the ops whose outputs reach no graph output. Finish leaves them out
// of the model anyway; dropping them early keeps them from counting as
// consumers, which would stop the fusion passes (a transpose sunk below an
// activation leaves its old copy behind, still reading the conv output).

#include <set>

#include "mace/converter/passes/graph_utils.h"
#include "mace/converter/passes/passes.h"

namespace mace {
namespace converter {

MaceStatus RemoveDeadOps(GraphBuilder *graph) {
  // A graph still being built has no outputs yet: everything would look dead.
  if (graph->output_names().empty()) return MaceStatus::MACE_SUCCESS;
  std::vector<OperatorDef> &ops = *graph->mutable_ops();
  std::set<std::string> needed(graph->output_names().begin(),
                               graph->output_names().end());
  std::vector<bool> erase(ops.size(), true);
  for (size_t i = ops.size(); i-- > 0;) {
    for (const std::string &output : ops[i].output()) {
      if (needed.count(output)) erase[i] = false;
    }
    if (!erase[i]) needed.insert(ops[i].input().begin(), ops[i].input().end());
  }
  EraseOps(&ops, erase);
  return MaceStatus::MACE_SUCCESS;
}

}  // namespace converter
}  // namespace mace
