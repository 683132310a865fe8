// Column-aligned text tables, as `ps` and `top` print them.
#ifndef LIMPWATCH_TOOLS_LIMPWATCH_TABLE_H_
#define LIMPWATCH_TOOLS_LIMPWATCH_TABLE_H_

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

namespace limpwatch::cli {

enum class Align { kLeft, kRight };

struct Column {
  std::string title;
  Align align = Align::kLeft;
  size_t max_width = 0;  // 0: as wide as the widest cell; else longer cells end in "..."
};

class Table {
 public:
  explicit Table(std::vector<Column> columns);

  // Cells beyond the column count are dropped, missing ones are blank. Cells
  // are made Printable, so callers may pass names straight from a segment.
  void AddRow(std::vector<std::string> cells);

  // Limits the width of one column after the fact (e.g. to fit the terminal).
  void SetMaxWidth(size_t column, size_t max_width);

  size_t row_count() const { return rows_.size(); }

  // Widths of every column as rendered, without the separators.
  std::vector<size_t> Widths() const;

  // Title line and rows, each line prefixed by `indent` and ended by '\n'.
  // Columns are separated by two spaces; no line has trailing blanks.
  std::string Render(std::string_view indent = "") const;

 private:
  std::vector<Column> columns_;
  std::vector<std::vector<std::string>> rows_;
};

// Width of `text` on a terminal, counting UTF-8 code points (names are
// demangled C++ and therefore nearly always ASCII; no wide-glyph tables here).
size_t DisplayWidth(std::string_view text);

// `text` cut to `width` columns, ending in "..." when cut.
std::string TruncateToWidth(std::string_view text, size_t width);

}  // namespace limpwatch::cli

#endif  // LIMPWATCH_TOOLS_LIMPWATCH_TABLE_H_
