// NumPy .npy files: the tools' format for input and output tensors.
//
// Reads format versions 1.0, 2.0 and 3.0, C order only. float32 ('<f4')
// and int32 ('<i4') load as they are; '<f8' and '<f2' convert to float32,
// '<i8' and '|u1' to int32 (an int64 value outside int32 is an error).
// Writes version 1.0 (2.0 only when the header would not fit), '<f4' or
// '<i4'. Every malformed file is a MaceStatus naming the file, never a crash.

#ifndef MACE_TOOLS_NPY_H_
#define MACE_TOOLS_NPY_H_

#include <cstdint>
#include <string>
#include <vector>

#include "mace/public/mace.h"

namespace mace {
namespace tools {

// A dense C-order array of float32 or int32 values.
struct NpyArray {
  enum class Type { kFloat32, kInt32 };

  Type type = Type::kFloat32;
  std::vector<int64_t> shape;  // empty: a scalar (one element)
  std::vector<float> floats;   // filled when type == kFloat32
  std::vector<int32_t> ints;   // filled when type == kInt32
  std::string source_dtype;    // descr found in the file, e.g. "<f8"

  int64_t size() const;  // element count
};

// Parses the bytes of a .npy file; `name` (usually the path) goes into
// error messages.
MaceStatus ParseNpy(const std::string &bytes, const std::string &name,
                    NpyArray *array);

// Reads and parses a .npy file.
MaceStatus ReadNpy(const std::string &path, NpyArray *array);

// The bytes of a .npy file holding `array` ('<f4' or '<i4').
MaceStatus SerializeNpy(const NpyArray &array, std::string *bytes);

// Writes `array` to `path`.
MaceStatus WriteNpy(const std::string &path, const NpyArray &array);

// "(1, 32, 32, 3)" — shapes as NumPy prints them.
std::string NpyShapeString(const std::vector<int64_t> &shape);

}  // namespace tools
}  // namespace mace

#endif  // MACE_TOOLS_NPY_H_
