// Writers: the same run_report as an aligned terminal table, CSV, JSON or Markdown.
// Every number printed comes from a result field; nothing is computed here but unit scaling.
#pragma once

#include <iosfwd>
#include <optional>
#include <string>
#include <string_view>

#include <nlohmann/json_fwd.hpp>

#include "harness/result.hpp"

namespace memlab {

enum class output_format { table, csv, json, markdown };
std::optional<output_format> parse_format(std::string_view name);  // table, csv, json, md|markdown
std::optional<output_format> format_from_path(std::string_view path);  // by extension
std::string_view to_string(output_format f);

inline constexpr std::string_view results_schema = "memlab.results/1";

void write_report(std::ostream& os, const run_report& report, output_format f);

// JSON in schema memlab.results/1 (DESIGN.md), and back. from_json validates the schema name,
// required keys and their types and throws std::invalid_argument naming what is wrong.
nlohmann::json to_json(const run_report& report);
run_report report_from_json(const nlohmann::json& j);

}  // namespace memlab
