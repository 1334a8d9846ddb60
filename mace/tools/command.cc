#include "mace/tools/command.h"

#include <cmath>
#include <cstdio>
#include <iostream>
#include <sstream>

#include "mace/core/status.h"
#include "mace/model/model_loader.h"
#include "mace/tools/flags.h"

namespace mace {
namespace tools {

int ReportError(const std::string &command, const std::string &what) {
  std::cerr << "mace " << command << ": error: " << what << std::endl;
  return kExitBadInput;
}

MaceStatus LoadModelGraph(const std::string &path, NetDef *net,
                          size_t *file_bytes) {
  std::string bytes;
  MACE_RETURN_IF_ERROR(
      WithContext(ReadFileToString(path, &bytes), "model file"));
  if (file_bytes != nullptr) *file_bytes = bytes.size();
  return WithContext(
      ParseModelGraph(reinterpret_cast<const unsigned char *>(bytes.data()),
                      bytes.size(), net),
      "model file '" + path + "'");
}

std::vector<std::string> InputNames(const NetDef &net) {
  std::vector<std::string> names;
  for (const InputOutputInfo &info : net.input_info()) {
    names.push_back(info.name());
  }
  return names;
}

std::vector<std::string> OutputNames(const NetDef &net) {
  std::vector<std::string> names;
  for (const InputOutputInfo &info : net.output_info()) {
    names.push_back(info.name());
  }
  return names;
}

std::string DataFormatName(int data_format) {
  switch (data_format) {
    case 0:
      return "NONE";
    case 1:
      return "NHWC";
    case 2:
      return "NCHW";
    case 100:
      return "HWOI";
    case 101:
      return "OIHW";
    case 102:
      return "HWIO";
    case 103:
      return "OHWI";
    case 1000:
      return "AUTO";
    default:
      return "format<" + std::to_string(data_format) + ">";
  }
}

std::string ElementTypeName(int data_type) {
  switch (data_type) {
    case DT_FLOAT:
      return "float32";
    case DT_UINT8:
      return "uint8";
    case DT_HALF:
      return "half";
    case DT_INT32:
      return "int32";
    case DT_FLOAT16:
      return "float16";
    case DT_BFLOAT16:
      return "bfloat16";
    case DT_INT16:
      return "int16";
    case DT_INT8:
      return "int8";
    case DT_UINT16:
      return "uint16";
    case DT_UINT32:
      return "uint32";
    case DT_BOOL:
      return "bool";
    default:
      return "type<" + std::to_string(data_type) + ">";
  }
}

std::string DimsString(const std::vector<int64_t> &dims) {
  std::ostringstream out;
  out << "[";
  for (size_t i = 0; i < dims.size(); ++i) out << (i ? "," : "") << dims[i];
  out << "]";
  return out.str();
}

std::string SanitizeFileName(const std::string &name) {
  std::string out = name;
  for (char &c : out) {
    if (c == '/' || c == ':') c = '_';
  }
  return out;
}

MaceStatus ParseAffinityPolicy(const std::string &text,
                               CPUAffinityPolicy *policy) {
  static const char *const kNames[] = {"none", "big_only", "little_only",
                                       "high_performance", "power_save"};
  for (int i = 0; i < 5; ++i) {
    std::string dashed = kNames[i];
    for (char &c : dashed) c = c == '_' ? '-' : c;
    if (text == kNames[i] || text == dashed || text == std::to_string(i)) {
      *policy = static_cast<CPUAffinityPolicy>(i);
      return MaceStatus::MACE_SUCCESS;
    }
  }
  return InvalidArgs("unknown CPU affinity policy '", text,
                     "' (none|big_only|little_only|high_performance|"
                     "power_save or 0-4)");
}

std::string AffinityPolicyName(CPUAffinityPolicy policy) {
  switch (policy) {
    case AFFINITY_NONE:
      return "none";
    case AFFINITY_BIG_ONLY:
      return "big_only";
    case AFFINITY_LITTLE_ONLY:
      return "little_only";
    case AFFINITY_HIGH_PERFORMANCE:
      return "high_performance";
    case AFFINITY_POWER_SAVE:
      return "power_save";
  }
  return "policy<" + std::to_string(static_cast<int>(policy)) + ">";
}

bool SplitAssignment(const std::string &text, std::string *name,
                     std::string *value) {
  const size_t equals = text.find('=');
  if (equals == std::string::npos || equals == 0 || equals + 1 == text.size()) {
    return false;
  }
  *name = text.substr(0, equals);
  *value = text.substr(equals + 1);
  return true;
}

std::string UnknownNameMessage(const std::string &what, const std::string &name,
                               const std::vector<std::string> &known) {
  std::string message = what;
  const std::string nearest = NearestMatch(name, known);
  if (!nearest.empty()) return message + "; did you mean '" + nearest + "'?";
  message += " (known: ";
  for (size_t i = 0; i < known.size(); ++i) {
    message += (i ? ", " : "") + known[i];
  }
  return message + ")";
}

std::string FormatFixed(double value, int decimals) {
  if (std::isnan(value)) return "nan";
  if (std::isinf(value)) return value > 0 ? "inf" : "-inf";
  char buffer[64];
  std::snprintf(buffer, sizeof(buffer), "%.*f", decimals, value);
  return buffer;
}

}  // namespace tools
}  // namespace mace
