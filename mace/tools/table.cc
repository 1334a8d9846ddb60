#include "mace/tools/table.h"

#include <algorithm>
#include <cstdint>

namespace mace {
namespace tools {

Table::Table(std::vector<std::string> header, std::vector<bool> left_aligned)
    : header_(std::move(header)), left_aligned_(std::move(left_aligned)) {
  left_aligned_.resize(header_.size(), false);
}

void Table::AddRow(std::vector<std::string> row) {
  row.resize(header_.size());
  rows_.push_back(std::move(row));
}

std::vector<size_t> Table::Widths() const {
  std::vector<size_t> widths(header_.size());
  for (size_t c = 0; c < header_.size(); ++c) widths[c] = header_[c].size();
  for (const auto &row : rows_) {
    for (size_t c = 0; c < row.size(); ++c) {
      widths[c] = std::max(widths[c], row[c].size());
    }
  }
  return widths;
}

std::string Table::Cell(const std::string &text, size_t column,
                        size_t width) const {
  const std::string pad(width - text.size(), ' ');
  return left_aligned_[column] ? text + pad : pad + text;
}

void Table::PrintBoxed(const std::string &title, std::ostream &out) const {
  const std::vector<size_t> widths = Widths();
  size_t total = 1;
  for (size_t w : widths) total += w + 3;
  const std::string rule(total, '-');
  auto print_row = [&](const std::vector<std::string> &row) {
    std::string line = "|";
    for (size_t c = 0; c < row.size(); ++c) {
      line += " " + Cell(row[c], c, widths[c]) + " |";
    }
    out << line << "\n";
  };
  out << rule << "\n";
  if (!title.empty()) {
    const size_t indent = title.size() < total ? (total - title.size()) / 2 : 0;
    out << std::string(indent, ' ') << title << "\n" << rule << "\n";
  }
  print_row(header_);
  out << rule << "\n";
  for (const auto &row : rows_) print_row(row);
  out << rule << "\n";
}

void Table::PrintPlain(std::ostream &out) const {
  const std::vector<size_t> widths = Widths();
  auto print_row = [&](const std::vector<std::string> &row) {
    std::string line;
    for (size_t c = 0; c < row.size(); ++c) {
      line += "  " + Cell(row[c], c, widths[c]);
    }
    out << line.substr(0, line.find_last_not_of(' ') + 1) << "\n";
  };
  print_row(header_);
  for (const auto &row : rows_) print_row(row);
}

std::string WithThousands(int64_t value) {
  std::string digits = std::to_string(value < 0 ? -value : value);
  std::string text;
  for (size_t i = 0; i < digits.size(); ++i) {
    if (i > 0 && (digits.size() - i) % 3 == 0) text += ',';
    text += digits[i];
  }
  return value < 0 ? "-" + text : text;
}

}  // namespace tools
}  // namespace mace
