#include "mace/converter/caffe/caffe_text_format.h"

#include <cctype>
#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <limits>

#include "mace/core/status.h"

namespace mace {
namespace converter {
namespace {

// Deeper nesting than any real net; bounds recursion on hostile input.
constexpr int kMaxDepth = 64;

enum class TokenKind { kEnd, kIdentifier, kNumber, kString, kSymbol };

struct Token {
  TokenKind kind = TokenKind::kEnd;
  std::string text;
  int line = 1;
  int column = 1;
};

class Tokenizer {
 public:
  Tokenizer(const std::string &text, const std::string &file_name)
      : text_(text), file_name_(file_name) {}

  // Reads the next token into current().
  MaceStatus Next();
  const Token &current() const { return current_; }

  template <typename... Pieces>
  MaceStatus ErrorAt(int line, int column, const Pieces &...pieces) const {
    return InvalidArgs("'", file_name_, "' line ", line, ", column ", column,
                       ": ", pieces...);
  }
  template <typename... Pieces>
  MaceStatus Error(const Pieces &...pieces) const {
    return ErrorAt(current_.line, current_.column, pieces...);
  }

 private:
  char Peek(size_t ahead = 0) const {
    return pos_ + ahead < text_.size() ? text_[pos_ + ahead] : '\0';
  }
  void Advance() {
    if (text_[pos_] == '\n') {
      ++line_;
      column_ = 1;
    } else {
      ++column_;
    }
    ++pos_;
  }
  void SkipSpaceAndComments();
  MaceStatus ReadString(Token *token);

  const std::string &text_;
  const std::string &file_name_;
  size_t pos_ = 0;
  int line_ = 1;
  int column_ = 1;
  Token current_;
};

void Tokenizer::SkipSpaceAndComments() {
  while (pos_ < text_.size()) {
    const char c = Peek();
    if (c == '#') {
      while (pos_ < text_.size() && Peek() != '\n') Advance();
    } else if (std::isspace(static_cast<unsigned char>(c))) {
      Advance();
    } else {
      return;
    }
  }
}

int HexValue(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

MaceStatus Tokenizer::ReadString(Token *token) {
  const char quote = Peek();
  Advance();
  while (true) {
    if (pos_ >= text_.size() || Peek() == '\n') {
      return ErrorAt(token->line, token->column,
                     "string literal is not terminated");
    }
    char c = Peek();
    if (c == quote) {
      Advance();
      return MaceStatus::MACE_SUCCESS;
    }
    if (c != '\\') {
      token->text.push_back(c);
      Advance();
      continue;
    }
    const int esc_line = line_, esc_column = column_;
    Advance();
    if (pos_ >= text_.size()) {
      return ErrorAt(esc_line, esc_column, "string ends inside an escape");
    }
    c = Peek();
    Advance();
    switch (c) {
      case 'n':
        token->text.push_back('\n');
        break;
      case 't':
        token->text.push_back('\t');
        break;
      case 'r':
        token->text.push_back('\r');
        break;
      case 'a':
        token->text.push_back('\a');
        break;
      case 'b':
        token->text.push_back('\b');
        break;
      case 'f':
        token->text.push_back('\f');
        break;
      case 'v':
        token->text.push_back('\v');
        break;
      case '\\':
      case '\'':
      case '"':
      case '?':
        token->text.push_back(c);
        break;
      case 'x': {
        int value = 0, digits = 0;
        while (digits < 2 && HexValue(Peek()) >= 0) {
          value = value * 16 + HexValue(Peek());
          Advance();
          ++digits;
        }
        if (digits == 0) {
          return ErrorAt(esc_line, esc_column, "\\x without hex digits");
        }
        token->text.push_back(static_cast<char>(value));
        break;
      }
      default:
        if (c >= '0' && c <= '7') {
          int value = c - '0';
          for (int i = 0; i < 2 && Peek() >= '0' && Peek() <= '7'; ++i) {
            value = value * 8 + (Peek() - '0');
            Advance();
          }
          token->text.push_back(static_cast<char>(value & 0xff));
        } else {
          return ErrorAt(esc_line, esc_column, "unknown escape '\\", c, "'");
        }
    }
  }
}

MaceStatus Tokenizer::Next() {
  SkipSpaceAndComments();
  Token token;
  token.line = line_;
  token.column = column_;
  if (pos_ >= text_.size()) {
    current_ = token;
    return MaceStatus::MACE_SUCCESS;
  }
  const char c = Peek();
  if (std::isalpha(static_cast<unsigned char>(c)) || c == '_') {
    token.kind = TokenKind::kIdentifier;
    while (std::isalnum(static_cast<unsigned char>(Peek())) || Peek() == '_' ||
           Peek() == '.') {
      token.text.push_back(Peek());
      Advance();
    }
  } else if (std::isdigit(static_cast<unsigned char>(c)) ||
             (c == '.' && std::isdigit(static_cast<unsigned char>(Peek(1))))) {
    token.kind = TokenKind::kNumber;
    while (std::isalnum(static_cast<unsigned char>(Peek())) || Peek() == '.' ||
           ((Peek() == '-' || Peek() == '+') &&
            (token.text.back() == 'e' || token.text.back() == 'E'))) {
      token.text.push_back(Peek());
      Advance();
    }
  } else if (c == '"' || c == '\'') {
    token.kind = TokenKind::kString;
    MACE_RETURN_IF_ERROR(ReadString(&token));
  } else if (std::string("{}<>[]:;,-").find(c) != std::string::npos) {
    token.kind = TokenKind::kSymbol;
    token.text.push_back(c);
    Advance();
  } else {
    current_ = token;
    if (std::isprint(static_cast<unsigned char>(c))) {
      return Error("unexpected character '", c, "'");
    }
    const char *digits = "0123456789abcdef";
    const unsigned char byte = static_cast<unsigned char>(c);
    return Error("unexpected byte 0x", digits[byte >> 4], digits[byte & 15]);
  }
  current_ = token;
  return MaceStatus::MACE_SUCCESS;
}

class Parser {
 public:
  Parser(const std::string &text, const std::string &file_name)
      : tokens_(text, file_name) {}

  MaceStatus Parse(TextMessage *root) {
    MACE_RETURN_IF_ERROR(tokens_.Next());
    MACE_RETURN_IF_ERROR(ParseFields(root, "", 0));
    return MaceStatus::MACE_SUCCESS;
  }

 private:
  bool AtSymbol(const char *symbol) const {
    return tokens_.current().kind == TokenKind::kSymbol &&
           tokens_.current().text == symbol;
  }
  std::string Describe(const Token &token) const {
    switch (token.kind) {
      case TokenKind::kEnd:
        return "end of file";
      case TokenKind::kString:
        return "string \"" + token.text + "\"";
      default:
        return "'" + token.text + "'";
    }
  }

  // Fields until `close` ("" = end of file).
  MaceStatus ParseFields(TextMessage *message, const std::string &close,
                         int depth);
  MaceStatus ParseField(TextMessage *message, int depth);
  MaceStatus ParseScalar(TextField *field);

  Tokenizer tokens_;
};

MaceStatus Parser::ParseFields(TextMessage *message, const std::string &close,
                               int depth) {
  while (true) {
    const Token &token = tokens_.current();
    if (token.kind == TokenKind::kEnd) {
      if (close.empty()) return MaceStatus::MACE_SUCCESS;
      return tokens_.Error("expected '", close, "' before end of file");
    }
    if (!close.empty() && AtSymbol(close.c_str())) {
      return tokens_.Next();
    }
    MACE_RETURN_IF_ERROR(ParseField(message, depth));
  }
}

MaceStatus Parser::ParseField(TextMessage *message, int depth) {
  const Token name = tokens_.current();
  if (name.kind != TokenKind::kIdentifier) {
    return tokens_.Error("expected a field name, got ", Describe(name));
  }
  MACE_RETURN_IF_ERROR(tokens_.Next());
  const bool has_colon = AtSymbol(":");
  if (has_colon) MACE_RETURN_IF_ERROR(tokens_.Next());

  auto new_field = [&]() {
    TextField field;
    field.name = name.text;
    field.line = name.line;
    field.column = name.column;
    return field;
  };
  if (AtSymbol("{") || AtSymbol("<")) {
    if (depth + 1 > kMaxDepth) {
      return tokens_.Error("messages nested deeper than ", kMaxDepth);
    }
    const std::string close = AtSymbol("{") ? "}" : ">";
    MACE_RETURN_IF_ERROR(tokens_.Next());
    TextField field = new_field();
    field.message = std::make_shared<TextMessage>();
    MACE_RETURN_IF_ERROR(ParseFields(field.message.get(), close, depth + 1));
    message->mutable_fields()->push_back(std::move(field));
  } else if (!has_colon) {
    return tokens_.Error("expected ':' or '{' after field '", name.text,
                         "', got ", Describe(tokens_.current()));
  } else if (AtSymbol("[")) {
    MACE_RETURN_IF_ERROR(tokens_.Next());
    while (!AtSymbol("]")) {
      TextField field = new_field();
      MACE_RETURN_IF_ERROR(ParseScalar(&field));
      message->mutable_fields()->push_back(std::move(field));
      if (AtSymbol(",")) {
        MACE_RETURN_IF_ERROR(tokens_.Next());
      } else if (!AtSymbol("]")) {
        return tokens_.Error("expected ',' or ']' in the list of '", name.text,
                             "', got ", Describe(tokens_.current()));
      }
    }
    MACE_RETURN_IF_ERROR(tokens_.Next());
  } else {
    TextField field = new_field();
    MACE_RETURN_IF_ERROR(ParseScalar(&field));
    message->mutable_fields()->push_back(std::move(field));
  }
  if (AtSymbol(";") || AtSymbol(",")) MACE_RETURN_IF_ERROR(tokens_.Next());
  return MaceStatus::MACE_SUCCESS;
}

MaceStatus Parser::ParseScalar(TextField *field) {
  std::string sign;
  if (AtSymbol("-")) {
    sign = "-";
    MACE_RETURN_IF_ERROR(tokens_.Next());
  }
  const Token &token = tokens_.current();
  switch (token.kind) {
    case TokenKind::kNumber:
    case TokenKind::kIdentifier:
      if (!sign.empty() && token.kind == TokenKind::kIdentifier &&
          token.text != "inf" && token.text != "infinity" &&
          token.text != "nan") {
        return tokens_.Error("expected a number after '-', got ",
                             Describe(token));
      }
      field->scalar = sign + token.text;
      return tokens_.Next();
    case TokenKind::kString:
      if (!sign.empty()) {
        return tokens_.Error("expected a number after '-', got ",
                             Describe(token));
      }
      field->quoted = true;
      // Adjacent string literals concatenate.
      while (tokens_.current().kind == TokenKind::kString) {
        field->scalar += tokens_.current().text;
        MACE_RETURN_IF_ERROR(tokens_.Next());
      }
      return MaceStatus::MACE_SUCCESS;
    default:
      return tokens_.Error("expected a value for field '", field->name,
                           "', got ", Describe(token));
  }
}

template <typename... Pieces>
MaceStatus FieldError(const std::string &what, const TextField &field,
                      const Pieces &...pieces) {
  return InvalidArgs(what, ": field '", field.name, "' (", field.Where(), ") ",
                     pieces...);
}

MaceStatus ExpectScalar(const std::string &what, const TextField &field) {
  if (field.is_message()) {
    return FieldError(what, field, "is a message where a value is expected");
  }
  return MaceStatus::MACE_SUCCESS;
}

}  // namespace

std::string TextField::Where() const {
  return StrCat("line ", line, ", column ", column);
}

const TextField *TextMessage::Find(const std::string &name) const {
  for (auto it = fields_.rbegin(); it != fields_.rend(); ++it) {
    if (it->name == name) return &*it;
  }
  return nullptr;
}

std::vector<const TextField *> TextMessage::FindAll(
    const std::string &name) const {
  std::vector<const TextField *> found;
  for (const TextField &field : fields_) {
    if (field.name == name) found.push_back(&field);
  }
  return found;
}

MaceStatus TextFieldToInt(const std::string &what, const TextField &field,
                          int64_t *value) {
  MACE_RETURN_IF_ERROR(ExpectScalar(what, field));
  const std::string &s = field.scalar;
  if (field.quoted || s.empty()) {
    return FieldError(what, field, "should be an integer, got '", s, "'");
  }
  errno = 0;
  char *end = nullptr;
  const long long parsed = std::strtoll(s.c_str(), &end, 0);
  if (errno == ERANGE) {
    return FieldError(what, field, "value ", s, " is out of range");
  }
  if (end == s.c_str() || *end != '\0') {
    return FieldError(what, field, "should be an integer, got '", s, "'");
  }
  *value = parsed;
  return MaceStatus::MACE_SUCCESS;
}

MaceStatus TextFieldToFloat(const std::string &what, const TextField &field,
                            float *value) {
  MACE_RETURN_IF_ERROR(ExpectScalar(what, field));
  std::string s = field.scalar;
  if (!s.empty() && (s.back() == 'f' || s.back() == 'F') &&
      s.find_first_of("xX") == std::string::npos && s != "inf" && s != "-inf") {
    s.pop_back();
  }
  if (field.quoted || s.empty()) {
    return FieldError(what, field, "should be a number, got '", field.scalar,
                      "'");
  }
  if (s == "inf" || s == "infinity") {
    *value = std::numeric_limits<float>::infinity();
    return MaceStatus::MACE_SUCCESS;
  }
  if (s == "-inf" || s == "-infinity") {
    *value = -std::numeric_limits<float>::infinity();
    return MaceStatus::MACE_SUCCESS;
  }
  char *end = nullptr;
  const double parsed = std::strtod(s.c_str(), &end);
  if (end == s.c_str() || *end != '\0') {
    return FieldError(what, field, "should be a number, got '", field.scalar,
                      "'");
  }
  *value = static_cast<float>(parsed);
  return MaceStatus::MACE_SUCCESS;
}

MaceStatus TextMessage::GetInt(const std::string &what, const std::string &name,
                               int64_t default_value, int64_t *value) const {
  const TextField *field = Find(name);
  if (field == nullptr) {
    *value = default_value;
    return MaceStatus::MACE_SUCCESS;
  }
  return TextFieldToInt(what, *field, value);
}

MaceStatus TextMessage::GetFloat(const std::string &what,
                                 const std::string &name, float default_value,
                                 float *value) const {
  const TextField *field = Find(name);
  if (field == nullptr) {
    *value = default_value;
    return MaceStatus::MACE_SUCCESS;
  }
  return TextFieldToFloat(what, *field, value);
}

MaceStatus TextMessage::GetBool(const std::string &what,
                                const std::string &name, bool default_value,
                                bool *value) const {
  const TextField *field = Find(name);
  if (field == nullptr) {
    *value = default_value;
    return MaceStatus::MACE_SUCCESS;
  }
  MACE_RETURN_IF_ERROR(ExpectScalar(what, *field));
  const std::string &s = field->scalar;
  if (!field->quoted && (s == "true" || s == "True" || s == "t" || s == "1")) {
    *value = true;
  } else if (!field->quoted &&
             (s == "false" || s == "False" || s == "f" || s == "0")) {
    *value = false;
  } else {
    return FieldError(what, *field, "should be true or false, got '", s, "'");
  }
  return MaceStatus::MACE_SUCCESS;
}

MaceStatus TextMessage::GetString(const std::string &what,
                                  const std::string &name,
                                  const std::string &default_value,
                                  std::string *value) const {
  const TextField *field = Find(name);
  if (field == nullptr) {
    *value = default_value;
    return MaceStatus::MACE_SUCCESS;
  }
  MACE_RETURN_IF_ERROR(ExpectScalar(what, *field));
  *value = field->scalar;
  return MaceStatus::MACE_SUCCESS;
}

MaceStatus TextMessage::GetInts(const std::string &what,
                                const std::string &name,
                                std::vector<int64_t> *values) const {
  values->clear();
  for (const TextField *field : FindAll(name)) {
    int64_t value = 0;
    MACE_RETURN_IF_ERROR(TextFieldToInt(what, *field, &value));
    values->push_back(value);
  }
  return MaceStatus::MACE_SUCCESS;
}

MaceStatus TextMessage::GetFloats(const std::string &what,
                                  const std::string &name,
                                  std::vector<float> *values) const {
  values->clear();
  for (const TextField *field : FindAll(name)) {
    float value = 0;
    MACE_RETURN_IF_ERROR(TextFieldToFloat(what, *field, &value));
    values->push_back(value);
  }
  return MaceStatus::MACE_SUCCESS;
}

MaceStatus TextMessage::GetMessage(const std::string &what,
                                   const std::string &name,
                                   const TextMessage **message) const {
  static const TextMessage kEmpty;
  const TextField *field = Find(name);
  if (field == nullptr) {
    *message = &kEmpty;
    return MaceStatus::MACE_SUCCESS;
  }
  if (!field->is_message()) {
    return FieldError(what, *field, "should be a message { ... }, got '",
                      field->scalar, "'");
  }
  *message = field->message.get();
  return MaceStatus::MACE_SUCCESS;
}

MaceStatus ParseTextFormat(const std::string &text,
                           const std::string &file_name, TextMessage *root) {
  *root = TextMessage();
  Parser parser(text, file_name);
  return parser.Parse(root);
}

}  // namespace converter
}  // namespace mace
