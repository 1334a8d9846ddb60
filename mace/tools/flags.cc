#include "mace/tools/flags.h"

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <limits>
#include <sstream>

#include "mace/core/status.h"

namespace mace {
namespace tools {
namespace {

// Flag names compare with underscores read as dashes.
std::string Normalize(const std::string &name) {
  std::string out = name;
  std::replace(out.begin(), out.end(), '_', '-');
  return out;
}

// Breaks `text` at spaces into lines of at most `width` characters; lines
// after the first are indented by `indent` spaces.
std::string WrapText(const std::string &text, size_t width, size_t indent) {
  std::istringstream words(text);
  std::string word, out, line;
  while (words >> word) {
    if (!line.empty() && line.size() + 1 + word.size() > width) {
      out += line + "\n" + std::string(indent, ' ');
      line.clear();
    }
    line += (line.empty() ? "" : " ") + word;
  }
  return out + line;
}

}  // namespace

int EditDistance(const std::string &a, const std::string &b) {
  std::vector<int> row(b.size() + 1);
  for (size_t j = 0; j <= b.size(); ++j) row[j] = static_cast<int>(j);
  for (size_t i = 1; i <= a.size(); ++i) {
    int diagonal = row[0];
    row[0] = static_cast<int>(i);
    for (size_t j = 1; j <= b.size(); ++j) {
      const int above = row[j];
      row[j] = std::min({row[j] + 1, row[j - 1] + 1,
                         diagonal + (a[i - 1] == b[j - 1] ? 0 : 1)});
      diagonal = above;
    }
  }
  return row[b.size()];
}

std::string NearestMatch(const std::string &word,
                         const std::vector<std::string> &candidates) {
  std::string best;
  int best_distance = std::numeric_limits<int>::max();
  for (const std::string &candidate : candidates) {
    int distance = EditDistance(word, candidate);
    // A prefix ("--valid" for "--validate-outputs") is a strong hint.
    if (word.size() >= 3 && candidate.compare(0, word.size(), word) == 0) {
      distance = std::min(distance, 1);
    }
    if (distance < best_distance) {
      best_distance = distance;
      best = candidate;
    }
  }
  const int allowed = std::max<int>(2, static_cast<int>(word.size()) / 3);
  return best_distance <= allowed ? best : "";
}

FlagSet::FlagSet(std::string usage, std::string summary)
    : usage_(std::move(usage)), summary_(std::move(summary)) {}

void FlagSet::Add(const std::string &name, const std::string &metavar,
                  const std::string &help, Kind kind, void *target) {
  flags_.push_back(Flag{Normalize(name), metavar, help, kind, target, {}});
}

void FlagSet::String(const std::string &name, const std::string &metavar,
                     const std::string &help, std::string *value) {
  Add(name, metavar, help, Kind::kString, value);
}

void FlagSet::Int(const std::string &name, const std::string &metavar,
                  const std::string &help, int *value) {
  Add(name, metavar, help, Kind::kInt, value);
}

void FlagSet::Double(const std::string &name, const std::string &metavar,
                     const std::string &help, double *value) {
  Add(name, metavar, help, Kind::kDouble, value);
}

void FlagSet::Switch(const std::string &name, const std::string &help,
                     bool *value) {
  Add(name, "", help, Kind::kSwitch, value);
}

void FlagSet::Repeated(const std::string &name, const std::string &metavar,
                       const std::string &help,
                       std::vector<std::string> *values) {
  Add(name, metavar, help, Kind::kRepeated, values);
}

void FlagSet::Alias(const std::string &alias, const std::string &name) {
  Flag *flag = Find(Normalize(name));
  if (flag != nullptr) flag->aliases.push_back(Normalize(alias));
}

void FlagSet::Positional(const std::string &metavar, const std::string &help,
                         std::string *value) {
  positionals_.push_back(PositionalArg{metavar, help, value});
}

FlagSet::Flag *FlagSet::Find(const std::string &normalized) {
  for (Flag &flag : flags_) {
    if (flag.name == normalized) return &flag;
    for (const std::string &alias : flag.aliases) {
      if (alias == normalized) return &flag;
    }
  }
  return nullptr;
}

bool FlagSet::WasSet(const std::string &name) const {
  const std::string normalized = Normalize(name);
  for (const Flag &flag : flags_) {
    if (flag.name == normalized) return flag.set;
  }
  return false;
}

std::string FlagSet::Suggest(const std::string &normalized) const {
  std::vector<std::string> names = {"help"};
  for (const Flag &flag : flags_) {
    names.push_back(flag.name);
    names.insert(names.end(), flag.aliases.begin(), flag.aliases.end());
  }
  return NearestMatch(normalized, names);
}

MaceStatus FlagSet::Assign(Flag *flag, const std::string &spelled,
                           const std::string &value) {
  flag->set = true;
  switch (flag->kind) {
    case Kind::kString:
      *static_cast<std::string *>(flag->target) = value;
      return MaceStatus::MACE_SUCCESS;
    case Kind::kRepeated:
      static_cast<std::vector<std::string> *>(flag->target)->push_back(value);
      return MaceStatus::MACE_SUCCESS;
    case Kind::kInt: {
      errno = 0;
      char *end = nullptr;
      const long parsed = std::strtol(value.c_str(), &end, 10);
      if (value.empty() || *end != '\0' || errno == ERANGE ||
          parsed < std::numeric_limits<int>::min() ||
          parsed > std::numeric_limits<int>::max()) {
        return InvalidArgs("flag ", spelled, " expects an integer, got '",
                           value, "'");
      }
      *static_cast<int *>(flag->target) = static_cast<int>(parsed);
      return MaceStatus::MACE_SUCCESS;
    }
    case Kind::kDouble: {
      errno = 0;
      char *end = nullptr;
      const double parsed = std::strtod(value.c_str(), &end);
      if (value.empty() || *end != '\0' || errno == ERANGE ||
          !std::isfinite(parsed)) {
        return InvalidArgs("flag ", spelled, " expects a number, got '", value,
                           "'");
      }
      *static_cast<double *>(flag->target) = parsed;
      return MaceStatus::MACE_SUCCESS;
    }
    case Kind::kSwitch: {
      bool on = true;
      if (value == "0" || value == "false" || value == "False") {
        on = false;
      } else if (!(value.empty() || value == "1" || value == "true" ||
                   value == "True")) {
        return InvalidArgs("flag ", spelled, " is a switch; got value '", value,
                           "'");
      }
      *static_cast<bool *>(flag->target) = on;
      return MaceStatus::MACE_SUCCESS;
    }
  }
  return MaceStatus::MACE_SUCCESS;
}

MaceStatus FlagSet::Parse(int argc, char **argv, int first, bool *help) {
  *help = false;
  bool flags_ended = false;
  for (int i = first; i < argc; ++i) {
    const std::string arg = argv[i];
    const bool is_flag =
        !flags_ended && arg.size() > 1 && arg[0] == '-' &&
        !(arg.size() > 1 &&
          (std::isdigit(static_cast<unsigned char>(arg[1])) || arg[1] == '.'));
    if (!is_flag) {
      if (positionals_filled_ >= positionals_.size()) {
        return InvalidArgs("unexpected argument '", arg, "'");
      }
      *positionals_[positionals_filled_++].target = arg;
      continue;
    }
    if (arg == "--") {
      flags_ended = true;
      continue;
    }
    if (arg == "-h" || arg == "--help") {
      *help = true;
      return MaceStatus::MACE_SUCCESS;
    }
    if (arg.compare(0, 2, "--") != 0) {
      return InvalidArgs("unknown flag '", arg, "' (flags start with --)");
    }
    const size_t equals = arg.find('=');
    const std::string spelled = arg.substr(0, equals);
    const std::string normalized = Normalize(spelled.substr(2));
    Flag *flag = Find(normalized);
    if (flag == nullptr) {
      const std::string nearest = Suggest(normalized);
      if (!nearest.empty()) {
        return InvalidArgs("unknown flag '", spelled, "'; did you mean '--",
                           nearest, "'?");
      }
      return InvalidArgs("unknown flag '", spelled, "'");
    }
    std::string value;
    if (equals != std::string::npos) {
      value = arg.substr(equals + 1);
    } else if (flag->kind != Kind::kSwitch) {
      if (i + 1 >= argc) {
        return InvalidArgs("flag ", spelled, " needs a value (", flag->metavar,
                           ")");
      }
      value = argv[++i];
    }
    MACE_RETURN_IF_ERROR(Assign(flag, spelled, value));
  }
  return MaceStatus::MACE_SUCCESS;
}

std::string FlagSet::Help() const {
  std::ostringstream out;
  out << "usage: " << usage_ << "\n\n" << summary_ << "\n";
  std::vector<std::pair<std::string, std::string>> rows;
  for (const PositionalArg &positional : positionals_) {
    rows.emplace_back(positional.metavar, positional.help);
  }
  for (const Flag &flag : flags_) {
    std::string left = "--" + flag.name;
    if (!flag.metavar.empty()) left += " " + flag.metavar;
    std::string right = flag.help;
    if (!flag.aliases.empty()) {
      right += " (also";
      for (const std::string &alias : flag.aliases) right += " --" + alias;
      right += ")";
    }
    if (flag.kind == Kind::kRepeated) right += "; repeatable";
    rows.emplace_back(left, right);
  }
  rows.emplace_back("--help", "show this help");
  size_t width = 0;
  for (const auto &row : rows) width = std::max(width, row.first.size());
  out << "\narguments:\n";
  const size_t indent = width + 4;
  const size_t text_width = indent + 30 < 79 ? 79 - indent : 30;
  for (const auto &row : rows) {
    out << "  " << row.first << std::string(width - row.first.size() + 2, ' ')
        << WrapText(row.second, text_width, indent) << "\n";
  }
  out << "\nUnderscores in flag names are accepted as dashes "
         "(--num_threads = --num-threads).\n";
  return out.str();
}

}  // namespace tools
}  // namespace mace
