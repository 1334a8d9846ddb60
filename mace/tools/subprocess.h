// Running other programs from the command (compilers, ssh, the reference
// runner): argv straight to posix_spawnp, no shell in between, so paths and
// names need no quoting.

#ifndef MACE_TOOLS_SUBPROCESS_H_
#define MACE_TOOLS_SUBPROCESS_H_

#include <string>
#include <vector>

#include "mace/public/mace.h"

namespace mace {
namespace tools {

// Runs args[0] (searched in PATH) with `args` and waits. A program that
// cannot start or exits non-zero is an error naming `what` and the command
// line. With `output`, the program's stdout is captured there instead of
// shown.
MaceStatus RunSubprocess(const std::vector<std::string> &args,
                         const std::string &what,
                         std::string *output = nullptr);

// The command line of `args`, for messages.
std::string CommandLine(const std::vector<std::string> &args);

}  // namespace tools
}  // namespace mace

#endif  // MACE_TOOLS_SUBPROCESS_H_
