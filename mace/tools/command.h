// What the `mace` subcommands share: their entry points, exit codes, error
// reporting, and small helpers for reading a model and naming its parts.

#ifndef MACE_TOOLS_COMMAND_H_
#define MACE_TOOLS_COMMAND_H_

#include <string>
#include <vector>

#include "mace/model/mace.pb.h"
#include "mace/public/mace.h"

namespace mace {
namespace tools {

// Exit codes of every subcommand.
constexpr int kExitOk = 0;
constexpr int kExitCheckFailed = 1;  // e.g. validation below threshold
constexpr int kExitBadInput = 2;     // flags, files, shapes, engine errors

// Subcommands: argv[first..argc) are their arguments.
int RunCommand(int argc, char **argv, int first);
int InfoCommand(int argc, char **argv, int first);
int ConvertCommand(int argc, char **argv, int first);

// Prints "mace <command>: error: <what>" on stderr; returns kExitBadInput.
int ReportError(const std::string &command, const std::string &what);

// Reads and parses a model graph file (NetDef or MultiNetDef).
MaceStatus LoadModelGraph(const std::string &path, NetDef *net,
                          size_t *file_bytes);

// Names of the declared inputs and outputs, in declaration order.
std::vector<std::string> InputNames(const NetDef &net);
std::vector<std::string> OutputNames(const NetDef &net);

// "NHWC", "NCHW", "NONE", ... for a proto data_format value.
std::string DataFormatName(int data_format);
// "float32", "int32", "float16", ... for a proto DataType.
std::string ElementTypeName(int data_type);

// "[1,32,32,3]".
std::string DimsString(const std::vector<int64_t> &dims);

// A tensor name made safe as a file name: '/' and ':' become '_'.
std::string SanitizeFileName(const std::string &name);

// "none" | "big_only" | "little_only" | "high_performance" | "power_save"
// or 0-4.
MaceStatus ParseAffinityPolicy(const std::string &text,
                               CPUAffinityPolicy *policy);
std::string AffinityPolicyName(CPUAffinityPolicy policy);

// Splits "name=value" at the first '='; false when there is none or a side
// is empty.
bool SplitAssignment(const std::string &text, std::string *name,
                     std::string *value);

// `what` plus "; did you mean 'x'?" or " (known: a, b, c)".
std::string UnknownNameMessage(const std::string &what, const std::string &name,
                               const std::vector<std::string> &known);

// Formats a duration or metric with a fixed number of decimals.
std::string FormatFixed(double value, int decimals);

}  // namespace tools
}  // namespace mace

#endif  // MACE_TOOLS_COMMAND_H_
