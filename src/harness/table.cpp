#include "harness/table.hpp"

#include <algorithm>
#include <ostream>

#include "harness/text.hpp"

namespace memlab {

void write_aligned(std::ostream& os, const text_table& t) {
  const std::size_t n = t.headers.size();
  std::vector<std::size_t> width(n);
  for (std::size_t c = 0; c < n; ++c) {
    width[c] = display_width(t.headers[c]);
    for (const auto& row : t.rows)
      if (c < row.size()) width[c] = std::max(width[c], display_width(row[c]));
  }
  const auto line = [&](const std::vector<std::string>& cells) {
    std::string out;
    for (std::size_t c = 0; c < n; ++c) {
      const std::string cell = c < cells.size() ? cells[c] : std::string();
      const std::string pad(width[c] - display_width(cell), ' ');
      if (c > 0) out += "  ";
      out += c < t.right.size() && t.right[c] ? pad + cell : cell + pad;
    }
    while (!out.empty() && out.back() == ' ') out.pop_back();  // the last column is left-aligned
    os << out << '\n';
  };
  line(t.headers);
  std::vector<std::string> rule;
  for (std::size_t w : width) rule.emplace_back(w, '-');
  line(rule);
  for (const auto& row : t.rows) line(row);
}

void write_markdown(std::ostream& os, const text_table& t) {
  // A cell's text as Markdown renders it: '|' escaped (it would end the cell), and '<' outside code spans
  // written &lt; (GitHub drops what reads as an HTML tag: UniversalCopy<T> would show as UniversalCopy).
  const auto cell = [](const std::string& s) {
    std::string out;
    bool code = false;
    for (char ch : s) {
      if (ch == '`') code = !code;
      if (ch == '|') out += '\\';
      if (ch == '<' && !code) {
        out += "&lt;";
        continue;
      }
      out += ch;
    }
    return out;
  };
  const auto line = [&](const std::vector<std::string>& cells) {
    os << '|';
    for (const auto& c : cells) os << ' ' << cell(c) << " |";
    os << '\n';
  };
  line(t.headers);
  os << '|';
  for (std::size_t c = 0; c < t.headers.size(); ++c) os << (c < t.right.size() && t.right[c] ? " ---: |" : " --- |");
  os << '\n';
  for (const auto& row : t.rows) line(row);
}

}  // namespace memlab
