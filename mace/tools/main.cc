// The `mace` command: one binary, subcommands in the style of git.

#include <cstring>
#include <iostream>
#include <new>
#include <stdexcept>
#include <string>
#include <vector>

#include "mace/public/mace.h"
#include "mace/tools/command.h"
#include "mace/tools/flags.h"

namespace {

struct Subcommand {
  const char *name;
  const char *summary;
  int (*entry)(int argc, char **argv, int first);
};

const Subcommand kSubcommands[] = {
    {"convert", "convert an ONNX model into mace's .pb + .data",
     mace::tools::ConvertCommand},
    {"run", "run a converted model: latency, outputs as .npy, validation",
     mace::tools::RunCommand},
    {"info", "inputs, outputs, ops, tensors and planned memory of a model",
     mace::tools::InfoCommand},
};

void PrintHelp(std::ostream &out) {
  out << "usage: mace <command> [arguments]\n"
         "       mace --version | --help\n\ncommands:\n";
  for (const Subcommand &command : kSubcommands) {
    out << "  " << command.name
        << std::string(8 - std::strlen(command.name), ' ') << command.summary
        << "\n";
  }
  out << "\nRun 'mace <command> --help' for the flags of a command.\n"
         "Exit status: 0 success, 1 failed check, 2 bad input.\n";
}

// Runs a command. An allocation that fails inside it (a model too large
// for the machine, or one whose sizes are absurd) ends the command with an
// error rather than an abort.
int RunGuarded(const Subcommand &command, int argc, char **argv, int first) {
  try {
    return command.entry(argc, argv, first);
  } catch (const std::bad_alloc &) {
    std::cerr << "mace " << command.name
              << ": error: out of memory (the model needs more than this "
                 "machine has)"
              << std::endl;
    return mace::tools::kExitBadInput;
  } catch (const std::length_error &) {
    std::cerr << "mace " << command.name
              << ": error: the model asks for a size beyond what memory can "
                 "hold"
              << std::endl;
    return mace::tools::kExitBadInput;
  }
}

}  // namespace

int main(int argc, char **argv) {
  if (argc < 2) {
    PrintHelp(std::cerr);
    return mace::tools::kExitBadInput;
  }
  const std::string first = argv[1];
  if (first == "--help" || first == "-h") {
    PrintHelp(std::cout);
    return mace::tools::kExitOk;
  }
  if (first == "--version" || first == "version") {
    std::cout << mace::MaceVersion() << std::endl;
    return mace::tools::kExitOk;
  }
  std::string name = first;
  int rest = 2;
  if (first == "help") {
    if (argc < 3) {
      PrintHelp(std::cout);
      return mace::tools::kExitOk;
    }
    name = argv[2];
    static char help_flag[] = "--help";
    argv[2] = help_flag;
    rest = 2;
  }
  std::vector<std::string> names;
  for (const Subcommand &command : kSubcommands) {
    if (name == command.name) return RunGuarded(command, argc, argv, rest);
    names.push_back(command.name);
  }
  std::string message = "unknown command '" + name + "'";
  const std::string nearest = mace::tools::NearestMatch(name, names);
  if (!nearest.empty()) message += "; did you mean '" + nearest + "'?";
  std::cerr << "mace: error: " << message << " (see 'mace --help')"
            << std::endl;
  return mace::tools::kExitBadInput;
}
