#include "mace/tools/subprocess.h"

#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include "mace/core/status.h"

extern char **environ;

namespace mace {
namespace tools {

std::string CommandLine(const std::vector<std::string> &args) {
  std::string line;
  for (const std::string &arg : args) line += (line.empty() ? "" : " ") + arg;
  return line;
}

MaceStatus RunSubprocess(const std::vector<std::string> &args,
                         const std::string &what, std::string *output) {
  std::vector<char *> argv;
  for (const std::string &arg : args) {
    argv.push_back(const_cast<char *>(arg.c_str()));
  }
  argv.push_back(nullptr);
  int pipe_fds[2] = {-1, -1};
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  if (output != nullptr) {
    if (pipe(pipe_fds) != 0) {
      posix_spawn_file_actions_destroy(&actions);
      return InvalidArgs(what, ": cannot create a pipe");
    }
    posix_spawn_file_actions_adddup2(&actions, pipe_fds[1], STDOUT_FILENO);
    posix_spawn_file_actions_addclose(&actions, pipe_fds[0]);
    posix_spawn_file_actions_addclose(&actions, pipe_fds[1]);
  }
  pid_t pid = 0;
  const int spawned =
      posix_spawnp(&pid, argv[0], &actions, nullptr, argv.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  if (output != nullptr) {
    close(pipe_fds[1]);
    if (spawned == 0) {
      char buffer[4096];
      ssize_t n = 0;
      while ((n = read(pipe_fds[0], buffer, sizeof(buffer))) > 0) {
        output->append(buffer, static_cast<size_t>(n));
      }
    }
    close(pipe_fds[0]);
  }
  if (spawned != 0) {
    return InvalidArgs(what, ": cannot start '", args[0], "'");
  }
  int status = 0;
  if (waitpid(pid, &status, 0) < 0 || !WIFEXITED(status) ||
      WEXITSTATUS(status) != 0) {
    return InvalidArgs(what, " failed: ", CommandLine(args));
  }
  return MaceStatus::MACE_SUCCESS;
}

}  // namespace tools
}  // namespace mace
