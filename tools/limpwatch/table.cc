#include "table.h"

#include <algorithm>
#include <utility>

#include "format.h"

namespace limpwatch::cli {
namespace {

constexpr std::string_view kSeparator = "  ";
constexpr std::string_view kEllipsis = "...";

bool IsContinuationByte(char c) { return (static_cast<unsigned char>(c) & 0xc0) == 0x80; }

}  // namespace

size_t DisplayWidth(std::string_view text) {
  return static_cast<size_t>(std::count_if(text.begin(), text.end(), [](char c) { return !IsContinuationByte(c); }));
}

std::string TruncateToWidth(std::string_view text, size_t width) {
  if (DisplayWidth(text) <= width) return std::string(text);
  if (width <= kEllipsis.size()) return std::string(kEllipsis.substr(0, width));
  size_t keep = width - kEllipsis.size();
  size_t end = 0;
  for (size_t points = 0; end < text.size(); ++end) {
    if (!IsContinuationByte(text[end])) {
      if (points == keep) break;
      ++points;
    }
  }
  return std::string(text.substr(0, end)) + std::string(kEllipsis);
}

Table::Table(std::vector<Column> columns) : columns_(std::move(columns)) {}

void Table::AddRow(std::vector<std::string> cells) {
  cells.resize(columns_.size());
  for (auto& cell : cells) cell = Printable(cell);
  rows_.push_back(std::move(cells));
}

void Table::SetMaxWidth(size_t column, size_t max_width) {
  if (column < columns_.size()) columns_[column].max_width = max_width;
}

std::vector<size_t> Table::Widths() const {
  std::vector<size_t> widths;
  for (size_t column = 0; column < columns_.size(); ++column) {
    size_t width = DisplayWidth(columns_[column].title);
    for (const auto& row : rows_) width = std::max(width, DisplayWidth(row[column]));
    if (columns_[column].max_width != 0) width = std::min(width, columns_[column].max_width);
    widths.push_back(width);
  }
  return widths;
}

std::string Table::Render(std::string_view indent) const {
  std::vector<size_t> widths = Widths();
  std::string out;
  auto render_line = [&](const std::vector<std::string>& cells) {
    std::string line(indent);
    for (size_t column = 0; column < cells.size(); ++column) {
      std::string cell = TruncateToWidth(cells[column], widths[column]);
      std::string padding(widths[column] - DisplayWidth(cell), ' ');
      if (column > 0) line += kSeparator;
      if (columns_[column].align == Align::kRight) {
        line += padding + cell;
      } else {
        line += cell + padding;
      }
    }
    // Left-aligned last columns pad with blanks nobody needs (and diffs flag).
    while (line.size() > indent.size() && line.back() == ' ') line.pop_back();
    out += line;
    out += '\n';
  };
  std::vector<std::string> titles;
  for (const auto& column : columns_) titles.push_back(Printable(column.title));
  render_line(titles);
  for (const auto& row : rows_) render_line(row);
  return out;
}

}  // namespace limpwatch::cli
