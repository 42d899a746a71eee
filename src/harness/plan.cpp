#include "harness/plan.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <stdexcept>

#include "harness/sizes.hpp"
#include "harness/text.hpp"

namespace memlab {
namespace {

// Keeps the first of each repeated name: `run copy copy` or `--dtype f16,f16` runs each case once.
template <class T>
std::vector<T> unique_in_order(const std::vector<T>& in) {
  std::vector<T> out;
  for (const auto& x : in)
    if (std::find(out.begin(), out.end(), x) == out.end()) out.push_back(x);
  return out;
}

// Each axis of `l`: the user's values where given (checked against this lab's range), else the
// lab's defaults (parsed once per declaration).
std::vector<std::vector<axis_value>> axis_values_of(const lab& l, const run_request& req) {
  std::vector<std::vector<axis_value>> out;
  for (const auto& a : l.axes) {
    const auto given =
        std::find_if(req.axes.begin(), req.axes.end(), [&](const auto& kv) { return kv.first == a.name; });
    if (given == req.axes.end()) {
      out.push_back(default_values(a));
    } else if (!given->second.typed.empty()) {
      check_axis_values(a, given->second.typed);
      out.push_back(given->second.typed);
    } else {
      out.push_back(parse_axis(a, given->second.text));
    }
  }
  return out;
}

}  // namespace

axis axis_flag::accepted() const {
  axis a = *decls.front();
  const bool all_choose = std::all_of(decls.begin(), decls.end(), [](const axis* d) { return !d->choices.empty(); });
  a.choices.clear();
  for (const axis* d : decls) {
    a.min = std::min(a.min, d->min);
    a.max = std::max(a.max, d->max);
    a.multiple_of = std::min(a.multiple_of, d->multiple_of);
    if (all_choose)
      for (auto c : d->choices)
        if (std::find(a.choices.begin(), a.choices.end(), c) == a.choices.end()) a.choices.push_back(c);
  }
  std::sort(a.choices.begin(), a.choices.end());
  return a;
}

std::vector<std::pair<std::string_view, std::vector<std::string_view>>> axis_flag::meanings() const {
  std::vector<std::pair<std::string_view, std::vector<std::string_view>>> out;
  for (std::size_t i = 0; i < decls.size(); ++i) {
    auto it = std::find_if(out.begin(), out.end(), [&](const auto& m) { return m.first == decls[i]->meaning; });
    if (it == out.end()) it = out.insert(out.end(), {decls[i]->meaning, {}});
    it->second.push_back(labs[i]);
  }
  return out;
}

std::vector<axis_flag> axis_flags(std::span<const lab* const> labs) {
  std::vector<axis_flag> out;
  for (const lab* l : labs) {
    for (const auto& a : l->axes) {
      auto it = std::find_if(out.begin(), out.end(), [&](const axis_flag& f) { return f.name == a.name; });
      if (it == out.end()) it = out.insert(out.end(), axis_flag{a.name, {}, {}});
      const axis& first = it->decls.empty() ? a : *it->decls.front();
      if (a.grammar != first.grammar || a.unit != first.unit || a.rank() != first.rank() || a.words != first.words) {
        throw std::logic_error(fmt::format(
            "labs {} and {} both declare the axis {} but read its values differently ({} vs {}): one flag has one "
            "reading, so give them distinct names",
            it->labs.front(), l->name, a.name, first.unit.empty() ? "words" : first.unit,
            a.unit.empty() ? "words" : a.unit));
      }
      it->decls.push_back(&a);
      it->labs.push_back(l->name);
    }
  }
  return out;
}

lab_info info_of(const lab& l) {
  lab_info info{std::string(l.name), std::string(l.teaches), std::string(l.size_meaning), l.roof, {}};
  for (const auto& p : l.params(l.make_case(l.default_dtype, 0))) info.params.push_back(p.name);
  return info;
}

std::vector<planned_case> plan_cases(const run_request& request, std::span<const lab* const> labs,
                                     std::span<const missing_lab> missing) {
  run_request req = request;
  req.labs = unique_in_order(req.labs);
  req.variants = unique_in_order(req.variants);
  req.dtypes = unique_in_order(req.dtypes);
  // In reading order: the labs, each lab's types and sizes (sizes.cpp), then what the labs' tables say of the
  // named rungs and axes and their values (lab.cpp), then the cases.
  std::vector<const lab*> chosen;
  if (req.labs.empty()) {
    chosen.assign(labs.begin(), labs.end());
  } else {
    for (const auto& name : req.labs) {
      const auto it = std::find_if(labs.begin(), labs.end(), [&](const lab* l) { return l->name == name; });
      if (it == labs.end()) {
        for (const auto& m : missing)
          if (m.name == name) throw std::invalid_argument(fmt::format("lab {} is not built: {}", name, m.why));
        std::vector<std::string_view> names;
        for (const lab* x : labs) names.push_back(x->name);
        throw std::invalid_argument(fmt::format("unknown lab '{}' (labs: {})", name, join(names)));
      }
      chosen.push_back(*it);
    }
  }
  struct lab_plan {
    const lab* l;
    std::vector<dtype> types;
    std::vector<size_spec> sizes;
    std::vector<std::vector<std::uint64_t>> n;  // n[type][size]: what the lab's sizes count, per type
    std::vector<std::vector<axis_value>> axes;
    std::vector<const variant*> variants;
  };
  // Lab by lab: its types, then its sizes, each counted in every type once. Byte counts (reads + writes,
  // offsets, guards) must stay far from 64-bit overflow.
  std::vector<size_spec> user_sizes = req.sizes.specs;
  try {
    if (user_sizes.empty() && !req.sizes.text.empty()) user_sizes = parse_sizes(req.sizes.text);
  } catch (const std::invalid_argument& e) {
    throw std::invalid_argument(fmt::format("--sizes: {}", e.what()));
  }
  std::vector<lab_plan> plans;
  for (const lab* l : chosen) {
    lab_plan lp{l, req.dtypes.empty() ? std::vector<dtype>{l->default_dtype} : req.dtypes, {}, {}, {}, {}};
    for (dtype t : lp.types) {
      if (std::find(l->dtypes.begin(), l->dtypes.end(), t) == l->dtypes.end()) {
        std::vector<std::string_view> names;
        for (dtype x : l->dtypes) names.push_back(to_string(x));
        throw std::invalid_argument(
            fmt::format("--dtype: lab {} does not support {} (it supports {})", l->name, to_string(t), join(names)));
      }
    }
    try {
      lp.sizes = user_sizes.empty() ? parse_sizes(l->default_sizes) : user_sizes;
      for (dtype t : lp.types) {
        auto& per_size = lp.n.emplace_back();
        for (const auto& sz : lp.sizes) per_size.push_back(elements_of(sz, size_of(t)));
      }
    } catch (const std::invalid_argument& e) {
      throw std::invalid_argument(fmt::format("--sizes: {}", e.what()));
    }
    for (std::size_t i = 0; i < lp.types.size(); ++i) {
      for (std::size_t k = 0; k < lp.sizes.size(); ++k) {
        if (lp.n[i][k] > (std::uint64_t{1} << 62) / size_of(lp.types[i])) {
          throw std::invalid_argument(fmt::format("--sizes: {} is too large: {} elements beyond 2^62 bytes",
                                                  lp.sizes[k].text, to_string(lp.types[i])));
        }
      }
    }
    plans.push_back(std::move(lp));
  }

  // What the tables say: a variant named with --variant exists in at least one chosen lab, an axis given is
  // read by at least one, and each lab's values of its axes (the user's, checked against its range, else its
  // defaults).
  for (const auto& v : req.variants) {
    const bool known =
        std::any_of(chosen.begin(), chosen.end(), [&](const lab* l) { return l->find_variant(v) != nullptr; });
    if (!known) {
      std::vector<std::string_view> names;
      for (const lab* l : chosen)
        for (const auto& x : l->variants) names.push_back(x.name);
      throw std::invalid_argument(fmt::format("--variant: unknown variant '{}' (variants: {})", v, join(names)));
    }
  }
  for (const auto& [name, values] : req.axes) {
    const bool read =
        std::any_of(chosen.begin(), chosen.end(), [&](const lab* l) { return l->find_axis(name) != nullptr; });
    if (!read) {
      std::vector<std::string_view> names;
      for (const lab* l : chosen) names.push_back(l->name);
      throw std::invalid_argument(
          fmt::format("{} is not an axis of lab {} (`memlab list` shows each lab's axes)", flag_of(name), join(names)));
    }
  }
  for (auto& lp : plans) lp.axes = axis_values_of(*lp.l, req);

  // The rungs and their count: a sweep of a million cases is refused before it takes any memory.
  std::uint64_t count = 0;
  for (auto& lp : plans) {
    const lab* l = lp.l;
    if (req.world_size > 1 && !l->ranks_axis.empty()) {
      for (std::size_t k = 0; k < l->axes.size(); ++k) {
        if (l->axes[k].name != l->ranks_axis) continue;
        const bool given =
            std::any_of(req.axes.begin(), req.axes.end(), [&](const auto& kv) { return kv.first == l->ranks_axis; });
        const auto world = static_cast<std::uint64_t>(req.world_size);
        if (given && (lp.axes[k].size() != 1 || lp.axes[k][0][0] != world)) {
          throw std::invalid_argument(fmt::format("{}: a distributed run has {} ranks, one per process: leave {} out",
                                                  flag_of(l->ranks_axis), req.world_size, flag_of(l->ranks_axis)));
        }
        lp.axes[k] = {axis_value{{world, 0, 0}, 1}};
      }
    }
    for (const auto& v : l->variants)
      if (req.variants.empty() || std::find(req.variants.begin(), req.variants.end(), v.name) != req.variants.end())
        lp.variants.push_back(&v);
    // Each rung runs the types it moves: a type none of the chosen rungs moves is refused, naming theirs.
    for (dtype t : lp.types) {
      if (lp.variants.empty() ||
          std::any_of(lp.variants.begin(), lp.variants.end(), [&](const variant* v) { return v->moves(t); })) {
        continue;
      }
      std::vector<std::string> rungs;
      for (const variant* v : lp.variants) {
        std::vector<std::string_view> types;
        for (dtype x : v->dtypes) types.push_back(to_string(x));
        rungs.push_back(fmt::format("{} ({})", v->name, join(types)));
      }
      throw std::invalid_argument(
          fmt::format("--dtype: no chosen rung of lab {} moves {}: {}", l->name, to_string(t), join(rungs)));
    }
    // Each rung over its types and the axes it reads (one that ignores an axis runs at its first value only).
    for (const variant* v : lp.variants) {
      const auto types = static_cast<std::uint64_t>(
          std::count_if(lp.types.begin(), lp.types.end(), [&](dtype t) { return v->moves(t); }));
      std::uint64_t per = types * lp.sizes.size() * std::max<std::size_t>(req.devices.size(), 1);
      for (std::size_t k = 0; k < l->axes.size(); ++k) {
        if (std::find(v->ignores.begin(), v->ignores.end(), l->axes[k].name) == v->ignores.end()) {
          per *= lp.axes[k].size();
        }
      }
      count += per;
    }
    if (count > max_cases) {
      throw std::invalid_argument(
          fmt::format("the sweep has more than {} cases (dtypes x sizes x each axis x variants); narrow --sizes, an "
                      "axis or --variant",
                      max_cases));
    }
  }

  std::vector<planned_case> out;
  out.reserve(count);
  // Several GPUs: every case on each in turn. One (or none named): the run's device, not recorded.
  std::vector<int> devices = req.devices.size() > 1 ? unique_in_order(req.devices) : std::vector<int>{-1};
  const int own_default = req.devices.empty() ? 0 : req.devices.front();
  for (const int device : devices) {
    const int own = device < 0 ? own_default : device;
    for (const auto& lp : plans) {
      const lab& l = *lp.l;
      for (std::size_t ti = 0; ti < lp.types.size(); ++ti) {
        const dtype t = lp.types[ti];
        for (std::size_t si = 0; si < lp.sizes.size(); ++si) {
          // The product of the axes, the first declared outermost: an odometer over their indices.
          std::vector<std::size_t> at(l.axes.size(), 0);
          for (bool more = true; more;) {
            case_params p;
            p.type = t;
            p.n = lp.n[ti][si];
            // Another GPU (axis::other_gpus): never the case's own, never one the machine lacks (when
            // known); a rung that does not read the axis runs at its first value all the same.
            std::vector<std::string_view> not_here;
            for (std::size_t k = 0; k < l.axes.size(); ++k) {
              const axis_value& v = lp.axes[k][at[k]];
              p.axes.emplace_back(l.axes[k].name, v);  // in declared order, as case_params::set keeps them
              if (l.axes[k].other_gpus &&
                  (v[0] == static_cast<std::uint64_t>(own) ||
                   (req.device_count > 0 && v[0] >= static_cast<std::uint64_t>(req.device_count)))) {
                not_here.push_back(l.axes[k].name);
              }
            }
            for (const variant* v : lp.variants) {
              if (!v->moves(t)) continue;
              const auto ignored = [&](std::string_view name) {
                return std::find(v->ignores.begin(), v->ignores.end(), name) != v->ignores.end();
              };
              if (!std::all_of(not_here.begin(), not_here.end(), ignored)) continue;
              // A rung that does not read an axis runs once, at that axis's first value.
              const bool repeat = std::any_of(v->ignores.begin(), v->ignores.end(), [&](std::string_view name) {
                for (std::size_t k = 0; k < l.axes.size(); ++k)
                  if (l.axes[k].name == name && at[k] != 0) return true;
                return false;
              });
              if (!repeat) out.push_back({&l, v, p, lp.sizes[si].text, device});
            }
            more = false;
            for (std::size_t k = l.axes.size(); k-- > 0;) {
              if (++at[k] < lp.axes[k].size()) {
                more = true;
                break;
              }
              at[k] = 0;
            }
          }
        }
      }
    }
  }
  return out;
}

run_plan plan_run(run_request req, std::span<const lab* const> labs, std::span<const missing_lab> missing,
                  const run_host& host) {
  run_plan out;
  const launch_env& env = host.launch;
  const auto refuse = [&](refusal_kind kind, std::string why) {
    out.refused = kind;
    out.why = std::move(why);
    out.cases.clear();
    return std::move(out);
  };
  if (env.distributed() && req.device_given) {
    return refuse(refusal_kind::usage,
                  fmt::format("--device: a run of one process per GPU takes its local rank's GPU ({}); leave "
                              "--device out",
                              env.describe()));
  }
  // The GPUs it runs on. A rank takes the GPU of its local rank; a launcher that gives each rank one GPU of
  // its own (srun --gpus-per-task=1 sets CUDA_VISIBLE_DEVICES) leaves each seeing its GPU as 0.
  const int gpus = host.gpus;
  if (env.distributed()) {
    req.devices = {gpus >= env.local_size ? env.local_rank : 0};
    req.world_size = env.size;
    req.progress = req.progress && env.rank == 0;  // rank 0 speaks for the run
  }
  if (req.all_devices) {
    req.devices.clear();
    for (int d = 0; d < gpus; ++d) req.devices.push_back(d);
  }
  req.device_count = gpus;
  out.request = req;
  try {
    out.cases = plan_cases(req, labs, missing);
  } catch (const std::invalid_argument& e) {
    return refuse(refusal_kind::usage, e.what());
  }
  if (out.cases.empty()) return refuse(refusal_kind::usage, "nothing to run: no chosen lab has the variants asked for");
  // A flag that would change nothing is refused, not ignored: only rungs with a loop launcher (the transfer
  // lab's collectives) are timed by nccl-tests' method.
  if (req.nccl_tests_graph_launches > 0 &&
      std::none_of(out.cases.begin(), out.cases.end(), [](const planned_case& c) { return c.v->loop.has_value(); })) {
    return refuse(refusal_kind::usage,
                  "--nccl-tests-graph: no chosen rung is timed by nccl-tests' method (the transfer lab's nccl_* "
                  "collectives are)");
  }
  // Then what the machine lacks (exit 3), still before any GPU work.
  if (env.distributed() && gpus == 0) {
    return refuse(refusal_kind::too_few_gpus, fmt::format("{}: no CUDA device on this rank", env.describe()));
  }
  if (env.distributed() && gpus < env.local_size && gpus != 1) {
    return refuse(refusal_kind::too_few_gpus,
                  fmt::format("{}: {} ranks on this host, but it shows {} GPUs", env.describe(), env.local_size, gpus));
  }
  if (req.all_devices && gpus == 0 && host.asked)
    return refuse(refusal_kind::no_device, "--device all: no CUDA device");
  // A lab's rung over more GPUs than the machine shows, asked for by name: refused now, not case by case.
  if (!env.distributed() && gpus > 0) {
    for (const auto& c : out.cases) {
      const axis* a = c.l->ranks_axis.empty() ? nullptr : c.l->find_axis(c.l->ranks_axis);
      const bool given = a != nullptr && std::any_of(req.axes.begin(), req.axes.end(),
                                                     [&](const auto& kv) { return kv.first == a->name; });
      if (given && c.p[*a] > static_cast<std::uint64_t>(gpus)) {
        return refuse(refusal_kind::too_few_gpus, fmt::format("{} {}: this machine shows {} GPU{}", a->flag(), c.p[*a],
                                                              gpus, gpus == 1 ? "" : "s"));
      }
    }
  }
  return out;
}

rung_lookup find_rung(std::span<const lab* const> labs, std::span<const missing_lab> missing, std::string_view lab,
                      std::string_view variant) {
  rung_lookup out;
  const auto it = std::find_if(labs.begin(), labs.end(), [&](const memlab::lab* l) { return l->name == lab; });
  if (it == labs.end()) {
    for (const auto& m : missing)
      if (m.name == lab) return {.why = fmt::format("lab {} is not built: {}", lab, m.why)};
    std::vector<std::string_view> names;
    for (const memlab::lab* x : labs) names.push_back(x->name);
    return {.why = fmt::format("unknown lab '{}' (labs: {})", lab, join(names))};
  }
  out.l = *it;
  if (variant.empty()) return out;
  out.v = out.l->find_variant(variant);
  if (out.v == nullptr) {
    std::vector<std::string_view> names;
    for (const auto& x : out.l->variants) names.push_back(x.name);
    out.why = out.l->built_without.empty()
                  ? fmt::format("lab {} has no rung '{}' (rungs: {})", lab, variant, join(names))
                  : fmt::format("{} is not built: built without {}", variant, out.l->built_without);
  }
  return out;
}

}  // namespace memlab
