#include "mace/tools/npy.h"

#include <cctype>
#include <cmath>
#include <cstring>
#include <fstream>
#include <limits>
#include <sstream>

#include "mace/core/status.h"
#include "mace/model/float_storage.h"

namespace mace {
namespace tools {
namespace {

constexpr char kMagic[] = "\x93NUMPY";
constexpr size_t kMagicSize = 6;
constexpr int64_t kMaxHeaderBytes = int64_t{1} << 24;  // far above real use

// How the element type of a file is stored and what it becomes.
struct DtypeInfo {
  char kind = 'f';     // 'f', 'i' or 'u'
  int item_bytes = 4;  // bytes per element in the file
  NpyArray::Type type = NpyArray::Type::kFloat32;
};

bool HostIsLittleEndian() {
  const uint16_t probe = 1;
  unsigned char first = 0;
  std::memcpy(&first, &probe, 1);
  return first == 1;
}

uint64_t LoadLittleEndian(const unsigned char *p, int bytes) {
  uint64_t value = 0;
  for (int i = bytes - 1; i >= 0; --i) value = (value << 8) | p[i];
  return value;
}

void StoreLittleEndian(uint64_t value, int bytes, std::string *out) {
  for (int i = 0; i < bytes; ++i) {
    out->push_back(static_cast<char>((value >> (8 * i)) & 0xff));
  }
}

MaceStatus FileError(const std::string &name, const std::string &what) {
  return InvalidArgs("npy file '", name, "': ", what);
}

// A parser for the Python dict literal of a .npy header, e.g.
// {'descr': '<f4', 'fortran_order': False, 'shape': (1, 3), }
class HeaderParser {
 public:
  HeaderParser(const std::string &text, const std::string &name)
      : text_(text), name_(name) {}

  MaceStatus Parse(std::string *descr, bool *fortran_order,
                   std::vector<int64_t> *shape) {
    bool has_descr = false, has_order = false, has_shape = false;
    SkipSpace();
    if (!Consume('{')) return Error("header does not start with '{'");
    while (true) {
      SkipSpace();
      if (Consume('}')) break;
      std::string key;
      MACE_RETURN_IF_ERROR(ParseString(&key));
      SkipSpace();
      if (!Consume(':')) return Error("expected ':' after key '" + key + "'");
      SkipSpace();
      if (key == "descr") {
        if (has_descr) return Error("key 'descr' appears twice");
        if (Peek() == '[') {
          return Error(
              "structured dtypes (a list in 'descr') are not "
              "supported");
        }
        MACE_RETURN_IF_ERROR(ParseString(descr));
        has_descr = true;
      } else if (key == "fortran_order") {
        if (has_order) return Error("key 'fortran_order' appears twice");
        MACE_RETURN_IF_ERROR(ParseBool(fortran_order));
        has_order = true;
      } else if (key == "shape") {
        if (has_shape) return Error("key 'shape' appears twice");
        MACE_RETURN_IF_ERROR(ParseShape(shape));
        has_shape = true;
      } else {
        return Error("unexpected key '" + key + "'");
      }
      SkipSpace();
      if (Consume(',')) continue;
      SkipSpace();
      if (Consume('}')) break;
      return Error("expected ',' or '}' after the value of '" + key + "'");
    }
    SkipSpace();
    if (pos_ != text_.size()) return Error("unexpected text after '}'");
    if (!has_descr) return Error("header has no 'descr'");
    if (!has_order) return Error("header has no 'fortran_order'");
    if (!has_shape) return Error("header has no 'shape'");
    return MaceStatus::MACE_SUCCESS;
  }

 private:
  MaceStatus Error(const std::string &what) const {
    return FileError(name_, "bad header dict: " + what +
                                " (header: " + Printable(text_) + ")");
  }

  static std::string Printable(const std::string &text) {
    std::string out;
    for (char c : text.substr(0, 120)) {
      out.push_back(std::isprint(static_cast<unsigned char>(c)) ? c : '?');
    }
    while (!out.empty() && out.back() == ' ') out.pop_back();
    if (text.size() > 120) out += "...";
    return out;
  }

  char Peek() const { return pos_ < text_.size() ? text_[pos_] : '\0'; }

  bool Consume(char c) {
    if (Peek() != c || pos_ >= text_.size()) return false;
    ++pos_;
    return true;
  }

  void SkipSpace() {
    while (pos_ < text_.size() &&
           std::isspace(static_cast<unsigned char>(text_[pos_]))) {
      ++pos_;
    }
  }

  MaceStatus ParseString(std::string *out) {
    const char quote = Peek();
    if (quote != '\'' && quote != '"') return Error("expected a string");
    ++pos_;
    out->clear();
    while (pos_ < text_.size() && text_[pos_] != quote) {
      if (text_[pos_] == '\\' && pos_ + 1 < text_.size()) ++pos_;
      out->push_back(text_[pos_++]);
    }
    if (!Consume(quote)) return Error("unterminated string");
    return MaceStatus::MACE_SUCCESS;
  }

  MaceStatus ParseBool(bool *value) {
    if (text_.compare(pos_, 4, "True") == 0) {
      pos_ += 4;
      *value = true;
    } else if (text_.compare(pos_, 5, "False") == 0) {
      pos_ += 5;
      *value = false;
    } else {
      return Error("'fortran_order' must be True or False");
    }
    return MaceStatus::MACE_SUCCESS;
  }

  MaceStatus ParseShape(std::vector<int64_t> *shape) {
    shape->clear();
    if (!Consume('(')) return Error("'shape' must be a tuple");
    while (true) {
      SkipSpace();
      if (Consume(')')) break;
      if (!std::isdigit(static_cast<unsigned char>(Peek()))) {
        return Error("'shape' must hold non-negative integers");
      }
      int64_t dim = 0;
      while (std::isdigit(static_cast<unsigned char>(Peek()))) {
        const int digit = text_[pos_++] - '0';
        if (dim > (std::numeric_limits<int64_t>::max() - digit) / 10) {
          return Error("a dimension of 'shape' is too large");
        }
        dim = dim * 10 + digit;
      }
      Consume('L');  // Python 2 long literals
      shape->push_back(dim);
      SkipSpace();
      if (Consume(',')) continue;
      SkipSpace();
      if (Consume(')')) break;
      return Error("expected ',' or ')' in 'shape'");
    }
    return MaceStatus::MACE_SUCCESS;
  }

  const std::string &text_;
  const std::string &name_;
  size_t pos_ = 0;
};

// Maps a descr like '<f4' onto how to read it.
MaceStatus LookUpDtype(const std::string &descr, const std::string &name,
                       DtypeInfo *info) {
  const std::string supported = "supported: <f4, <i4, <f8, <i8, <f2, |u1";
  if (descr.size() < 3) {
    return FileError(name,
                     "unsupported dtype '" + descr + "' (" + supported + ")");
  }
  char order = descr[0];
  const std::string code = descr.substr(1);
  if (order == '=') order = HostIsLittleEndian() ? '<' : '>';
  struct Entry {
    const char *code;
    DtypeInfo info;
  };
  static const Entry kTable[] = {
      {"f4", {'f', 4, NpyArray::Type::kFloat32}},
      {"f8", {'f', 8, NpyArray::Type::kFloat32}},
      {"f2", {'f', 2, NpyArray::Type::kFloat32}},
      {"i4", {'i', 4, NpyArray::Type::kInt32}},
      {"i8", {'i', 8, NpyArray::Type::kInt32}},
      {"u1", {'u', 1, NpyArray::Type::kInt32}},
  };
  for (const Entry &entry : kTable) {
    if (code != entry.code) continue;
    const bool one_byte = entry.info.item_bytes == 1;
    if (order == '>' && !one_byte) {
      return FileError(name, "big-endian dtype '" + descr +
                                 "' is not supported (" + supported + ")");
    }
    if (order != '<' && order != '|' && order != '>') break;
    if (order == '|' && !one_byte) break;
    *info = entry.info;
    return MaceStatus::MACE_SUCCESS;
  }
  return FileError(name,
                   "unsupported dtype '" + descr + "' (" + supported + ")");
}

// Decodes `count` elements of `dtype` from `data` into `array`.
MaceStatus DecodeElements(const unsigned char *data, int64_t count,
                          const DtypeInfo &dtype, const std::string &name,
                          NpyArray *array) {
  const int bytes = dtype.item_bytes;
  if (dtype.type == NpyArray::Type::kFloat32) {
    array->floats.resize(static_cast<size_t>(count));
    for (int64_t i = 0; i < count; ++i) {
      const uint64_t bits = LoadLittleEndian(data + i * bytes, bytes);
      float value = 0.0f;
      if (bytes == 4) {
        const uint32_t b32 = static_cast<uint32_t>(bits);
        std::memcpy(&value, &b32, 4);
      } else if (bytes == 8) {
        double d = 0.0;
        std::memcpy(&d, &bits, 8);
        value = static_cast<float>(d);
      } else {
        value = HalfToFloat(static_cast<uint16_t>(bits));
      }
      array->floats[static_cast<size_t>(i)] = value;
    }
    return MaceStatus::MACE_SUCCESS;
  }
  array->ints.resize(static_cast<size_t>(count));
  for (int64_t i = 0; i < count; ++i) {
    const uint64_t bits = LoadLittleEndian(data + i * bytes, bytes);
    int64_t value = 0;
    if (dtype.kind == 'u') {
      value = static_cast<int64_t>(bits);
    } else if (bytes == 4) {
      value = static_cast<int32_t>(static_cast<uint32_t>(bits));
    } else {
      std::memcpy(&value, &bits, 8);
    }
    if (value < std::numeric_limits<int32_t>::min() ||
        value > std::numeric_limits<int32_t>::max()) {
      return FileError(
          name, StrCat("element ", i, " = ", value, " does not fit in int32"));
    }
    array->ints[static_cast<size_t>(i)] = static_cast<int32_t>(value);
  }
  return MaceStatus::MACE_SUCCESS;
}

}  // namespace

int64_t NpyArray::size() const {
  int64_t count = 1;
  for (int64_t d : shape) count *= d;
  return count;
}

std::string NpyShapeString(const std::vector<int64_t> &shape) {
  std::ostringstream out;
  out << "(";
  for (size_t i = 0; i < shape.size(); ++i) {
    out << (i > 0 ? ", " : "") << shape[i];
  }
  if (shape.size() == 1) out << ",";
  out << ")";
  return out.str();
}

MaceStatus ParseNpy(const std::string &bytes, const std::string &name,
                    NpyArray *array) {
  const auto *raw = reinterpret_cast<const unsigned char *>(bytes.data());
  if (bytes.size() < kMagicSize ||
      std::memcmp(bytes.data(), kMagic, kMagicSize) != 0) {
    return FileError(name,
                     "bad magic: not a .npy file (expected the bytes "
                     "\\x93NUMPY at the start)");
  }
  if (bytes.size() < kMagicSize + 2) {
    return FileError(name, "truncated header: no format version");
  }
  const int major = raw[6], minor = raw[7];
  if (major < 1 || major > 3 || minor != 0) {
    return FileError(name, StrCat("unsupported format version ", major, ".",
                                  minor, " (supported: 1.0, 2.0, 3.0)"));
  }
  const size_t length_bytes = major == 1 ? 2 : 4;
  const size_t prefix = kMagicSize + 2 + length_bytes;
  if (bytes.size() < prefix) {
    return FileError(name, "truncated header: no header length");
  }
  const int64_t header_len = static_cast<int64_t>(
      LoadLittleEndian(raw + 8, static_cast<int>(length_bytes)));
  if (header_len > kMaxHeaderBytes) {
    return FileError(
        name, StrCat("header length ", header_len, " is implausibly large"));
  }
  if (static_cast<int64_t>(bytes.size() - prefix) < header_len) {
    return FileError(name, StrCat("truncated header: ", header_len,
                                  " header bytes announced, ",
                                  bytes.size() - prefix, " present"));
  }
  const std::string header =
      bytes.substr(prefix, static_cast<size_t>(header_len));
  std::string descr;
  bool fortran_order = false;
  std::vector<int64_t> shape;
  MACE_RETURN_IF_ERROR(
      HeaderParser(header, name).Parse(&descr, &fortran_order, &shape));
  if (fortran_order) {
    return FileError(name,
                     "Fortran order (fortran_order: True) is not "
                     "supported; save a C-order array "
                     "(numpy.ascontiguousarray)");
  }
  DtypeInfo dtype;
  MACE_RETURN_IF_ERROR(LookUpDtype(descr, name, &dtype));

  const int64_t data_bytes = static_cast<int64_t>(bytes.size()) -
                             static_cast<int64_t>(prefix) - header_len;
  // The element count, checked against the data present before it can
  // overflow.
  const int64_t max_count = data_bytes / dtype.item_bytes;
  int64_t count = 1;
  for (int64_t d : shape) {
    if (d == 0) count = 0;
  }
  for (int64_t d : shape) {
    if (count == 0) break;
    if (count > max_count / d) {
      return FileError(name, StrCat("shape ", NpyShapeString(shape), " of ",
                                    descr, " needs more than the ", data_bytes,
                                    " data bytes in the file (truncated)"));
    }
    count *= d;
  }
  const int64_t needed = count * dtype.item_bytes;
  if (needed != data_bytes) {
    return FileError(
        name,
        StrCat("shape ", NpyShapeString(shape), " of ", descr, " needs ",
               needed, " data bytes, the file has ", data_bytes,
               needed > data_bytes ? " (truncated)" : " (trailing bytes)"));
  }
  NpyArray result;
  result.type = dtype.type;
  result.shape = shape;
  result.source_dtype = descr;
  MACE_RETURN_IF_ERROR(
      DecodeElements(raw + prefix + header_len, count, dtype, name, &result));
  *array = std::move(result);
  return MaceStatus::MACE_SUCCESS;
}

MaceStatus ReadNpy(const std::string &path, NpyArray *array) {
  std::ifstream file(path, std::ios::binary);
  if (!file) return InvalidArgs("cannot open npy file '", path, "'");
  std::ostringstream contents;
  contents << file.rdbuf();
  if (file.bad()) return InvalidArgs("cannot read npy file '", path, "'");
  return ParseNpy(contents.str(), path, array);
}

MaceStatus SerializeNpy(const NpyArray &array, std::string *bytes) {
  for (int64_t d : array.shape) {
    if (d < 0) return InvalidArgs("npy: negative dimension in shape");
  }
  const bool is_float = array.type == NpyArray::Type::kFloat32;
  const size_t stored = is_float ? array.floats.size() : array.ints.size();
  if (static_cast<int64_t>(stored) != array.size()) {
    return InvalidArgs("npy: shape ", NpyShapeString(array.shape), " has ",
                       array.size(), " elements but ", stored,
                       " values were given");
  }
  std::string header =
      std::string("{'descr': '") + (is_float ? "<f4" : "<i4") +
      "', 'fortran_order': False, 'shape': " + NpyShapeString(array.shape) +
      ", }";
  // Version 1.0 has a 2-byte header length; 2.0 a 4-byte one.
  const bool v1 = header.size() + 64 <= 65535;
  const size_t prefix = kMagicSize + 2 + (v1 ? 2 : 4);
  const size_t total = prefix + header.size() + 1;
  header.append((64 - total % 64) % 64, ' ');
  header.push_back('\n');

  bytes->clear();
  bytes->reserve(prefix + header.size() + stored * 4);
  bytes->append(kMagic, kMagicSize);
  bytes->push_back(static_cast<char>(v1 ? 1 : 2));
  bytes->push_back(0);
  StoreLittleEndian(header.size(), v1 ? 2 : 4, bytes);
  bytes->append(header);
  for (size_t i = 0; i < stored; ++i) {
    uint32_t bits = 0;
    if (is_float) {
      std::memcpy(&bits, &array.floats[i], 4);
    } else {
      std::memcpy(&bits, &array.ints[i], 4);
    }
    StoreLittleEndian(bits, 4, bytes);
  }
  return MaceStatus::MACE_SUCCESS;
}

MaceStatus WriteNpy(const std::string &path, const NpyArray &array) {
  std::string bytes;
  MACE_RETURN_IF_ERROR(WithContext(SerializeNpy(array, &bytes), path));
  std::ofstream file(path, std::ios::binary | std::ios::trunc);
  if (!file) return InvalidArgs("cannot open '", path, "' for writing");
  file.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  file.close();
  if (!file) return RuntimeError("failed writing '", path, "'");
  return MaceStatus::MACE_SUCCESS;
}

}  // namespace tools
}  // namespace mace
