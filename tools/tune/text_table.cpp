#include "text_table.hpp"

#include <algorithm>
#include <stdexcept>
#include <utility>

namespace tilemm::cli {

TextTable::TextTable(std::vector<Column> columns, std::string indent)
    : columns_(std::move(columns)), indent_(std::move(indent)) {}

void TextTable::add_row(std::vector<std::string> cells) {
  if (cells.size() > columns_.size())
    throw std::invalid_argument("TextTable: a row of " + std::to_string(cells.size()) +
                                " cells in a table of " + std::to_string(columns_.size()) + " columns");
  cells.resize(columns_.size());
  rows_.push_back(std::move(cells));
}

void TextTable::print(std::ostream& out) const {
  std::vector<std::size_t> width(columns_.size());
  for (std::size_t c = 0; c < columns_.size(); ++c) {
    width[c] = columns_[c].title.size();
    for (const auto& row : rows_) width[c] = std::max(width[c], row[c].size());
  }
  auto line = [&](const std::vector<std::string>& cells) {
    std::string text = indent_;
    for (std::size_t c = 0; c < cells.size(); ++c) {
      const std::string pad(width[c] - cells[c].size(), ' ');
      const bool last = c + 1 == cells.size();
      if (c > 0) text += "  ";
      if (columns_[c].align == Align::right)
        text += pad + cells[c];
      else
        text += last ? cells[c] : cells[c] + pad;
    }
    out << text << "\n";
  };
  std::vector<std::string> header;
  for (const auto& column : columns_) header.push_back(column.title);
  line(header);
  for (const auto& row : rows_) line(row);
}

}  // namespace tilemm::cli
