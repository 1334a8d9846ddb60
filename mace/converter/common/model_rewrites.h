// Rewrites of a finished model that the deployment file asks for:
// `obfuscate` (names that reveal nothing of the network) and `winograd`
// (the Winograd tile the 3x3 and 5x5 convolutions use).

#ifndef MACE_CONVERTER_COMMON_MODEL_REWRITES_H_
#define MACE_CONVERTER_COMMON_MODEL_REWRITES_H_

#include "mace/model/mace.pb.h"

namespace mace {
namespace converter {

// Renames every op ("op0", "op1", ...) and every tensor that is not a
// model input or output ("t0", ...; weights "w0", ...), consistently across
// ops, weights and output shapes; drops the record of fused source nodes.
void ObfuscateNames(NetDef *net);

// Sets Conv2D's `winograd` argument on every Conv2D: 0 never, 2/4/6 that
// output tile where the shape allows it (3x3 or 5x5, stride 1, dilation
// 1; 5x5 windows have tiles 2 and 4, and take 4 for 6);
// negative leaves the choice to the runtime.
void SetWinograd(NetDef *net, int tile);

}  // namespace converter
}  // namespace mace

#endif  // MACE_CONVERTER_COMMON_MODEL_REWRITES_H_
