// memlab check's references: what a GPU model should deliver, one JSON file per model
// (references/<model-slug>.json, schema memlab.check.reference/1: docs/check-reference.schema.json).
// For each metric: its median and relative spread over the runs (and GPUs) it was made from, and the
// floors derived from them by the rule the file writes down (check/verdict.hpp). Per-GPU metrics are
// kept apart from the node's (pairs, all-reduce), which are keyed by GPU count and link type, so that
// one file serves a one-GPU machine and a node of several.
#pragma once

#include <cstdint>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "check/verdict.hpp"

namespace memlab::check {

inline constexpr std::string_view reference_schema = "memlab.check.reference/1";

// What matches a GPU to a reference: its name, memory and SMs (the file), and how its GPUs are joined
// (a node section): "NVSwitch", "NVLink" (links straight between GPUs) or "PCIe".
struct model_keys {
  std::string name;
  double memory_gib = 0;  // total device memory, GiB (cudaDeviceProp::totalGlobalMem / 2^30)
  int sm_count = 0;
  std::string link;
};
// Why `gpu` is not the model `ref` describes ("" when it is): names both.
std::string model_mismatch(const model_keys& ref, const model_keys& gpu);
// "NVIDIA H100 80GB HBM3" -> "nvidia-h100-80gb-hbm3": the file's name without ".json".
std::string model_slug(std::string_view name);

struct reference_figure {
  std::string metric, unit;
  bool higher_is_better = true;
  double median = 0, spread = 0, min = 0, max = 0;
  std::vector<double> values;  // every GPU's (or pair's) value in every run
  floors at;                   // as written in the file: what verdicts are judged by
};

struct node_section {
  int gpus = 0;
  std::string link;
  std::vector<reference_figure> metrics;
  [[nodiscard]] const reference_figure* find(std::string_view metric) const;
};

struct reference {
  std::string path;  // where it was read from ("" when made in this run)
  model_keys model;
  std::string machine, date, memlab_version, git_sha;
  int driver_version = 0, runs = 0, gpus = 0;
  floor_rule rule;
  std::vector<reference_figure> per_gpu;
  std::vector<node_section> node;
  [[nodiscard]] const reference_figure* find(std::string_view metric) const;
  // The node section for `gpus` GPUs joined by `link`; nullptr when the file has none.
  [[nodiscard]] const node_section* node_for(int gpus, std::string_view link) const;
};

// A reference file that cannot be used: the message names the file and what is wrong (one line).
class reference_error : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// Reads and checks a reference file (its schema, its keys, a figure per known metric at most once).
reference read_reference(const std::string& path);
// The file's text: what read_reference reads back.
std::string reference_json(const reference& r);
// A figure made from `values` by the rule: median, spread, min, max, floors.
reference_figure make_figure(std::string metric, std::string unit, bool higher_is_better, std::vector<double> values,
                             const floor_rule& rule);

// Where references are looked for: `flag` when given, else $MEMLAB_REFERENCES, else an install's
// share/memlab/references beside its bin/, else the source tree's references/ (compiled in).
std::string reference_dir(const std::string& flag);
// The reference in `dir` whose model matches `gpu` (name, memory, SMs); nullopt when none does.
// Throws reference_error for a file there that cannot be read.
std::optional<reference> find_reference(const std::string& dir, const model_keys& gpu);

}  // namespace memlab::check
