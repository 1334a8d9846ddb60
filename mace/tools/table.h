// Aligned text tables for the command's reports (validation, benchmark).

#ifndef MACE_TOOLS_TABLE_H_
#define MACE_TOOLS_TABLE_H_

#include <ostream>
#include <string>
#include <vector>

namespace mace {
namespace tools {

class Table {
 public:
  // `left_aligned[c]`: column c is text (left) rather than a number (right).
  Table(std::vector<std::string> header, std::vector<bool> left_aligned);

  void AddRow(std::vector<std::string> row);
  size_t rows() const { return rows_.size(); }

  // "| a | b |" rows between rules of '-', as MACE's benchmark prints them.
  void PrintBoxed(const std::string &title, std::ostream &out) const;
  // Two-space separated columns, no rules (short reports).
  void PrintPlain(std::ostream &out) const;

 private:
  std::vector<size_t> Widths() const;
  std::string Cell(const std::string &text, size_t column,
                   size_t width) const;

  std::vector<std::string> header_;
  std::vector<bool> left_aligned_;
  std::vector<std::vector<std::string>> rows_;
};

// 1234567 → "1,234,567".
std::string WithThousands(int64_t value);

}  // namespace tools
}  // namespace mace

#endif  // MACE_TOOLS_TABLE_H_
