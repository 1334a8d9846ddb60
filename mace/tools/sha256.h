// SHA-256 (FIPS 180-4), for the checksums of a deployment file.

#ifndef MACE_TOOLS_SHA256_H_
#define MACE_TOOLS_SHA256_H_

#include <cstddef>
#include <cstdint>
#include <string>

#include "mace/public/mace.h"

namespace mace {
namespace tools {

class Sha256 {
 public:
  Sha256();
  void Update(const void *data, size_t size);
  // The digest as 64 lowercase hex digits; the object is spent afterwards.
  std::string HexDigest();

 private:
  void Block(const uint8_t *block);

  uint32_t state_[8];
  uint8_t buffer_[64];
  size_t buffered_ = 0;
  uint64_t total_bytes_ = 0;
};

// The hex SHA-256 of a string.
std::string Sha256Hex(const std::string &bytes);

// The hex SHA-256 of a file's contents.
MaceStatus Sha256File(const std::string &path, std::string *hex);

}  // namespace tools
}  // namespace mace

#endif  // MACE_TOOLS_SHA256_H_
