// A reader for protobuf text format, enough for Caffe's .prototxt files.
//
// libmace links protobuf-lite, whose generated classes have no reflection,
// so google::protobuf::TextFormat cannot fill them (and linking the full
// library beside the lite one risks two copies of its globals). The
// prototxt is parsed instead into a schema-free tree of named fields; the
// Caffe frontend reads parameters from it by name with typed getters whose
// errors carry the field's line and column.
//
// Grammar: fields `name: scalar`, `name { ... }`, `name: { ... }`,
// `name < ... >`, `name: [v, v, ...]`; optional `;` or `,` separators;
// `#` comments; strings in single or double quotes with C escapes,
// adjacent strings concatenated.

#ifndef MACE_CONVERTER_CAFFE_CAFFE_TEXT_FORMAT_H_
#define MACE_CONVERTER_CAFFE_CAFFE_TEXT_FORMAT_H_

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "mace/public/mace.h"

namespace mace {
namespace converter {

class TextMessage;

struct TextField {
  std::string name;
  int line = 0;
  int column = 0;
  // A scalar's token: the unescaped contents of a string, or the text of a
  // number or identifier (a leading '-' included).
  std::string scalar;
  bool quoted = false;
  // Set for message-valued fields.
  std::shared_ptr<TextMessage> message;

  bool is_message() const { return message != nullptr; }
  // "line L, column C" for messages.
  std::string Where() const;
};

class TextMessage {
 public:
  const std::vector<TextField> &fields() const { return fields_; }
  std::vector<TextField> *mutable_fields() { return &fields_; }

  // The last occurrence (protobuf's rule for non-repeated fields), or null.
  const TextField *Find(const std::string &name) const;
  std::vector<const TextField *> FindAll(const std::string &name) const;
  bool Has(const std::string &name) const { return Find(name) != nullptr; }

  // Typed access; a missing field gives the default, a field of the wrong
  // kind an error naming `what` (e.g. "layer 'conv1'"), field and position.
  MaceStatus GetInt(const std::string &what, const std::string &name,
                    int64_t default_value, int64_t *value) const;
  MaceStatus GetFloat(const std::string &what, const std::string &name,
                      float default_value, float *value) const;
  MaceStatus GetBool(const std::string &what, const std::string &name,
                     bool default_value, bool *value) const;
  // Strings and enum names alike.
  MaceStatus GetString(const std::string &what, const std::string &name,
                       const std::string &default_value,
                       std::string *value) const;
  MaceStatus GetInts(const std::string &what, const std::string &name,
                     std::vector<int64_t> *values) const;
  MaceStatus GetFloats(const std::string &what, const std::string &name,
                       std::vector<float> *values) const;
  // A sub-message; an empty message when absent.
  MaceStatus GetMessage(const std::string &what, const std::string &name,
                        const TextMessage **message) const;

 private:
  std::vector<TextField> fields_;
};

// Parses `text`; errors name `file_name` with the line and column of the
// offending token.
MaceStatus ParseTextFormat(const std::string &text,
                           const std::string &file_name, TextMessage *root);

// Scalar conversions, shared with callers that walk fields themselves.
MaceStatus TextFieldToInt(const std::string &what, const TextField &field,
                          int64_t *value);
MaceStatus TextFieldToFloat(const std::string &what, const TextField &field,
                            float *value);

}  // namespace converter
}  // namespace mace

#endif  // MACE_CONVERTER_CAFFE_CAFFE_TEXT_FORMAT_H_
