// Plain-text tables for the CLI's human output: every column is as wide as its widest cell, so a
// long variant name moves its column's edge instead of pushing the rest of its row out of line.
#pragma once

#include <ostream>
#include <string>
#include <vector>

namespace tilemm::cli {

class TextTable {
 public:
  enum class Align { left, right };
  struct Column {
    std::string title;
    Align align = Align::left;
  };

  // `indent` starts every line; columns are separated by two spaces.
  explicit TextTable(std::vector<Column> columns, std::string indent = "");

  // One row; missing trailing cells are empty. Throws std::invalid_argument for more cells than
  // columns.
  void add_row(std::vector<std::string> cells);

  // The header and every row. The last column is not padded (no trailing spaces). Widths count
  // bytes: the cells are ASCII.
  void print(std::ostream& out) const;

 private:
  std::vector<Column> columns_;
  std::string indent_;
  std::vector<std::vector<std::string>> rows_;
};

}  // namespace tilemm::cli
