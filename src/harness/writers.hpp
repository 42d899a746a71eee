// Writers: the same run_report as terminal tables (one per lab), CSV, JSON or Markdown, and the
// sinks that stream it to files and stdout while a run goes on. Every number printed comes from a
// result field; nothing is computed here but unit scaling.
#pragma once

#include <iosfwd>
#include <optional>
#include <string>
#include <string_view>

#include <nlohmann/json_fwd.hpp>

#include "harness/result.hpp"
#include "harness/runner.hpp"
#include "harness/table.hpp"

namespace memlab {

enum class output_format { table, csv, json, markdown };
std::optional<output_format> parse_format(std::string_view name);      // table, csv, json, md|markdown
std::optional<output_format> format_from_path(std::string_view path);  // .txt .csv .json .md
std::string_view to_string(output_format f);

// Schema of the JSON (docs/results-schema.md, docs/results.schema.json).
inline constexpr std::string_view results_schema = "memlab.results/1";

// The whole report in format f.
std::string render(const run_report& report, output_format f);

// The rows of one lab, with only the columns its axes and roof need.
text_table lab_table(const run_report& report, const lab_info& lab);
// One line: the best rung (not a peer) and its % of the roof; the worst rung at the same point and
// the ratio between them; the peers measured at that point. "" when the lab has no measured rung.
std::string lab_summary(const run_report& report, const lab_info& lab);

nlohmann::ordered_json to_json(const run_report& report);

// Writes `text` to `path` through a temporary file in the same folder, renamed into place once
// every write, flush, fsync and close succeeded: `path` holds either its previous content or the
// new one, never a part. Throws write_error naming the file.
void write_file_atomically(const std::string& path, const std::string& text);

// Rewrites `path` in format f after every case.
class file_sink final : public results_sink {
 public:
  file_sink(std::string path, output_format f) : path_(std::move(path)), f_(f) {}
  void update(const run_report& r) override { write_file_atomically(path_, render(r, f_)); }
  void finish(const run_report& r) override { write_file_atomically(path_, render(r, f_)); }

 private:
  std::string path_;
  output_format f_;
};

// stdout: in table format, each lab's table and summary as soon as its last case is done; in the
// other formats the whole report at the end. A failed stdout (a closed pipe) is noted, not fatal.
class stdout_sink final : public results_sink {
 public:
  stdout_sink(std::ostream& os, output_format f) : os_(os), f_(f) {}
  void update(const run_report& r) override;
  void lab_done(const run_report& r) override;
  void finish(const run_report& r) override;

 private:
  void print_labs_before(const run_report& r, std::size_t end);
  std::ostream& os_;
  output_format f_;
  std::size_t printed_ = 0;  // results already shown
  bool header_ = false;
};

}  // namespace memlab
