// TensorFlow frozen GraphDef (.pb) → MACE op graph. Reads TF 1.x graphs and
// TF 2.x graphs frozen from a ConcreteFunction (variables already turned
// into Const nodes), NHWC with HWIO filters. Inputs are the Placeholders;
// outputs are ConvertOptions::output_names, or else every node whose
// outputs nothing reads (NoOp, Assert, Const and Placeholder nodes aside;
// NoOp and Assert are dropped). Gaps (unknown ops, unsupported attribute
// values, non-constant shapes) are all collected before failing, so one run
// reports them all.

#ifndef MACE_CONVERTER_TENSORFLOW_TF_FRONTEND_H_
#define MACE_CONVERTER_TENSORFLOW_TF_FRONTEND_H_

#include <string>
#include <vector>

#include "mace/converter/common/frontend.h"
#include "mace/converter/ir/graph_builder.h"
#include "mace/converter/tensorflow/tf_graph.pb.h"
#include "mace/public/mace.h"

namespace mace {
namespace converter {

// Converts `model_path`. When anything is unsupported, returns
// MACE_UNSUPPORTED with every gap in the message and in `gaps`.
MaceStatus ConvertTensorflowModel(const std::string &model_path,
                                  const ConvertOptions &options,
                                  GraphBuilder *graph,
                                  std::vector<ConversionGap> *gaps);

// Converts a parsed GraphDef, which errors call `label` (its path).
MaceStatus ConvertTensorflowGraphDef(const tf::GraphDef &graph_def,
                                     const std::string &label,
                                     const ConvertOptions &options,
                                     GraphBuilder *graph,
                                     std::vector<ConversionGap> *gaps);

}  // namespace converter
}  // namespace mace

#endif  // MACE_CONVERTER_TENSORFLOW_TF_FRONTEND_H_
