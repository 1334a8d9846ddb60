// A small command-line parser for the `mace` subcommands.
//
// Flags are `--name value` or `--name=value`; switches take no value;
// repeated flags collect every occurrence; positionals fill in order; `--`
// ends the flags. Underscores in a flag name read as dashes, so MACE's
// spellings (`--num_threads`) work for every flag. An unknown flag is an
// error that suggests the nearest known one.

#ifndef MACE_TOOLS_FLAGS_H_
#define MACE_TOOLS_FLAGS_H_

#include <string>
#include <vector>

#include "mace/public/mace.h"

namespace mace {
namespace tools {

class FlagSet {
 public:
  // `usage` is the first line of --help ("mace run --model M.pb ..."),
  // `summary` a paragraph under it.
  FlagSet(std::string usage, std::string summary);

  void String(const std::string &name, const std::string &metavar,
              const std::string &help, std::string *value);
  void Int(const std::string &name, const std::string &metavar,
           const std::string &help, int *value);
  void Double(const std::string &name, const std::string &metavar,
              const std::string &help, double *value);
  void Switch(const std::string &name, const std::string &help, bool *value);
  void Repeated(const std::string &name, const std::string &metavar,
                const std::string &help, std::vector<std::string> *values);
  // Another spelling of an already declared flag (`--model_file`).
  void Alias(const std::string &alias, const std::string &name);
  void Positional(const std::string &metavar, const std::string &help,
                  std::string *value);

  // Parses argv[first..argc). Sets *help when --help or -h is given (and
  // then stops parsing). Errors name the flag.
  MaceStatus Parse(int argc, char **argv, int first, bool *help);

  // Whether the flag (by its declared name) appeared on the command line.
  bool WasSet(const std::string &name) const;

  // The --help text.
  std::string Help() const;

 private:
  enum class Kind { kString, kInt, kDouble, kSwitch, kRepeated };
  struct Flag {
    std::string name;
    std::string metavar;
    std::string help;
    Kind kind;
    void *target;
    std::vector<std::string> aliases;
    bool set = false;
  };
  struct PositionalArg {
    std::string metavar;
    std::string help;
    std::string *target;
  };

  void Add(const std::string &name, const std::string &metavar,
           const std::string &help, Kind kind, void *target);
  Flag *Find(const std::string &normalized);
  MaceStatus Assign(Flag *flag, const std::string &spelled,
                    const std::string &value);
  std::string Suggest(const std::string &normalized) const;

  std::string usage_;
  std::string summary_;
  std::vector<Flag> flags_;
  std::vector<PositionalArg> positionals_;
  size_t positionals_filled_ = 0;
};

// Edit distance between two strings (insert, delete, substitute).
int EditDistance(const std::string &a, const std::string &b);

// The candidate nearest to `word` when it is close enough to be a likely
// typo, else "".
std::string NearestMatch(const std::string &word,
                         const std::vector<std::string> &candidates);

}  // namespace tools
}  // namespace mace

#endif  // MACE_TOOLS_FLAGS_H_
