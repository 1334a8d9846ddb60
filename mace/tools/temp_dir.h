// A fresh folder under the system's temporary directory, removed with
// everything in it when the object goes.

#ifndef MACE_TOOLS_TEMP_DIR_H_
#define MACE_TOOLS_TEMP_DIR_H_

#include <stdlib.h>

#include <filesystem>
#include <string>

namespace mace {
namespace tools {

class TempDir {
 public:
  // path() is empty when the folder could not be made.
  explicit TempDir(const std::string &prefix = "mace") {
    std::string pattern =
        (std::filesystem::temp_directory_path() / (prefix + ".XXXXXX"))
            .string();
    if (mkdtemp(&pattern[0]) != nullptr) path_ = pattern;
  }
  ~TempDir() {
    std::error_code ignored;
    if (!path_.empty()) std::filesystem::remove_all(path_, ignored);
  }
  TempDir(const TempDir &) = delete;
  TempDir &operator=(const TempDir &) = delete;

  const std::string &path() const { return path_; }

 private:
  std::string path_;
};

}  // namespace tools
}  // namespace mace

#endif  // MACE_TOOLS_TEMP_DIR_H_
