// Every lab's table, well formed for the flags the CLI builds from it: each axis with its unit and
// parseable defaults, each rung's `ignores` naming an axis of its lab, and labs that share a flag
// reading its values alike (one flag has one reading; its meaning may be each lab's own, and --help
// shows each). In process, over the labs of this build. An ignored axis is not applicable in the
// params a result reports: for a shape axis, every extent.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "cli/commands.hpp"
#include "harness/plan.hpp"
#include "harness/registry.hpp"

namespace memlab {
namespace {

TEST(lab_tables, every_table_is_well_formed) {
  for (const lab* l : all_labs()) EXPECT_EQ(l->table_problem(), "") << l->name;
}

TEST(lab_tables, labs_sharing_a_flag_read_its_values_alike) {
  std::vector<axis_flag> flags;
  ASSERT_NO_THROW(flags = axis_flags(all_labs()));
  for (const auto& f : flags) {
    for (const axis* d : f.decls) {
      EXPECT_EQ(d->unit, f.decls.front()->unit) << f.name;
      EXPECT_EQ(d->grammar, f.decls.front()->grammar) << f.name;
    }
  }
}

// Two declarations of one name that count different things (elements in one lab, bytes in another)
// cannot share a flag: building the flags says so, naming both labs.
TEST(lab_tables, a_flag_with_two_readings_is_refused) {
  const axis elements{.name = "stride", .meaning = "m", .unit = "elements", .defaults = "1"};
  const axis bytes{.name = "stride", .meaning = "m", .unit = "bytes", .grammar = axis_grammar::bytes, .defaults = "8"};
  const lab a{.name = "a", .axes = {elements}}, b{.name = "b", .axes = {bytes}};
  const std::vector<const lab*> labs{&a, &b};
  try {
    (void)axis_flags(labs);
    ADD_FAILURE() << "two readings of --stride were accepted";
  } catch (const std::logic_error& e) {
    EXPECT_NE(std::string(e.what()).find("labs a and b both declare the axis stride"), std::string::npos) << e.what();
  }
}

// The help of a flag several labs declare shows each lab's meaning, and every flag its unit.
TEST(lab_tables, help_shows_each_labs_meaning_and_the_unit) {
  testing::internal::CaptureStdout();
  char a0[] = "memlab", a1[] = "run", a2[] = "--help";
  char* argv[] = {a0, a1, a2};
  EXPECT_EQ(cli::main_with(3, argv, {all_labs(), missing_labs()}), 0);
  const std::string help = testing::internal::GetCapturedStdout();
  for (const auto& f : axis_flags(all_labs())) {
    EXPECT_NE(help.find(f.decls.front()->flag()), std::string::npos) << f.name;
    for (const auto& [meaning, labs] : f.meanings()) {
      EXPECT_NE(help.find(std::string(meaning.substr(0, 40))), std::string::npos) << f.name << ": " << meaning;
    }
    if (!f.decls.front()->unit.empty()) {
      EXPECT_NE(help.find(std::string(f.decls.front()->unit) + "; "), std::string::npos) << f.name;
    }
  }
}

// A rung that ignores an axis runs once, at the axis's first value, and reports it as not applicable:
// every extent of a shape axis too (the axis is named "shape", its params "rows" and "cols").
TEST(lab_tables, an_ignored_shape_axis_is_not_applicable_in_every_extent) {
  const axis shape{.name = "shape",
                   .meaning = "m",
                   .unit = "elements",
                   .grammar = axis_grammar::shape,
                   .defaults = "4x8,2x2",
                   .min = 1,
                   .max = 100,
                   .extents = {"rows", "cols"}};
  const lab l{.name = "fake",
              .dtypes = {dtype::f32},
              .default_sizes = "64",
              .axes = {shape},
              .variants = {{.name = "reads"}, {.name = "skips", .ignores = {"shape"}}}};
  EXPECT_EQ(l.table_problem(), "");
  const case_params p = l.make_case(dtype::f32, 64);
  const auto reads = l.params(p, &l.variants[0]);
  const auto skips = l.params(p, &l.variants[1]);
  ASSERT_EQ(skips.size(), 4u);
  EXPECT_EQ(std::get<std::int64_t>(reads[2].value), 4);
  for (std::size_t i : {2u, 3u}) {
    EXPECT_TRUE(std::holds_alternative<std::monostate>(skips[i].value)) << skips[i].name;
    EXPECT_EQ(to_string(skips[i].value), "-");
  }
  const std::vector<const lab*> labs{&l};
  const auto cases = plan_cases(run_request{}, labs);
  ASSERT_EQ(cases.size(), 3u);  // reads: 4x8 and 2x2; skips: once
  EXPECT_EQ(cases[1].v->name, "skips");

  lab bad = l;
  bad.variants[1].ignores = {"rows"};  // a param's name, not the axis's
  EXPECT_NE(bad.table_problem().find("ignores rows, which is not an axis of lab fake"), std::string::npos);
}

// Documented choices and multiples are checked when the value is parsed, naming the flag.
TEST(lab_tables, choices_and_multiples_are_checked_when_parsed) {
  const axis ilp{
      .name = "ilp", .meaning = "m", .unit = "vectors", .defaults = "4", .min = 1, .max = 8, .choices = {1, 2, 4, 8}};
  EXPECT_EQ(parse_axis(ilp, "1,2,8").size(), 3u);
  try {
    (void)parse_axis(ilp, "3");
    ADD_FAILURE() << "--ilp 3 was accepted";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("--ilp: 3 is not one of 1, 2, 4, 8"), std::string::npos) << e.what();
  }
  const axis stride{.name = "node_stride",
                    .meaning = "m",
                    .unit = "bytes",
                    .grammar = axis_grammar::bytes,
                    .defaults = "128",
                    .min = 8,
                    .max = 1024,
                    .multiple_of = 8};
  EXPECT_THROW((void)parse_axis(stride, "12"), std::invalid_argument);
  EXPECT_EQ(parse_axis(stride, "16,1KiB").size(), 2u);
  EXPECT_EQ(accepted_values(stride), "8..1024, multiples of 8");
}

}  // namespace
}  // namespace memlab
