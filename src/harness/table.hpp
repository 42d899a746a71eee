// The one table printer: results and `memlab inspect` alike, aligned for a terminal or as Markdown.
// Host-only.
#pragma once

#include <iosfwd>
#include <string>
#include <vector>

namespace memlab {

struct text_table {
  std::vector<std::string> headers;
  std::vector<bool> right;  // right-aligned (numbers); defaults to left when shorter than headers
  std::vector<std::vector<std::string>> rows;

  void column(std::string header, bool right_aligned) {
    headers.push_back(std::move(header));
    right.push_back(right_aligned);
  }
};

// Columns padded to their widest cell (UTF-8 aware), two spaces apart, a rule under the header.
void write_aligned(std::ostream& os, const text_table& t);
// A GitHub Markdown table; '|' in cells escaped.
void write_markdown(std::ostream& os, const text_table& t);

}  // namespace memlab
