// --sizes grammar: every form, the texts kept for each value, byte/element conversion, every error.
// Also the dtype table, since element sizes come from it.
#include <gtest/gtest.h>

#include <stdexcept>
#include <string>
#include <vector>

#include "harness/dtype.hpp"
#include "harness/sizes.hpp"
#include "harness/text.hpp"

namespace {

using memlab::parse_sizes;
using memlab::size_spec;

std::vector<std::uint64_t> values(const std::vector<size_spec>& v) {
  std::vector<std::uint64_t> out;
  for (const auto& s : v) out.push_back(s.value);
  return out;
}
std::vector<std::string> texts(const std::vector<size_spec>& v) {
  std::vector<std::string> out;
  for (const auto& s : v) out.push_back(s.text);
  return out;
}

constexpr std::uint64_t KiB = 1024, MiB = KiB * 1024, GiB = MiB * 1024;

TEST(Sizes, PlainNumber) {
  const auto v = parse_sizes("4096");
  ASSERT_EQ(v.size(), 1u);
  EXPECT_EQ(v[0].value, 4096u);
  EXPECT_FALSE(v[0].bytes);
  EXPECT_EQ(v[0].text, "4096");
  EXPECT_EQ(values(parse_sizes("0")), (std::vector<std::uint64_t>{0}));
}

TEST(Sizes, ElementSuffixes) {
  const auto v = parse_sizes("1K,1M,64M,2G");
  EXPECT_EQ(values(v), (std::vector<std::uint64_t>{KiB, MiB, 64 * MiB, 2 * GiB}));
  EXPECT_EQ(texts(v), (std::vector<std::string>{"1K", "1M", "64M", "2G"}));
  for (const auto& s : v) EXPECT_FALSE(s.bytes);
}

TEST(Sizes, ByteSuffixes) {
  const auto v = parse_sizes("512B,4KiB,3MiB,1GiB");
  EXPECT_EQ(values(v), (std::vector<std::uint64_t>{512, 4 * KiB, 3 * MiB, GiB}));
  for (const auto& s : v) EXPECT_TRUE(s.bytes);
  EXPECT_EQ(v[3].text, "1GiB");
}

TEST(Sizes, PowersOfTwo) {
  const auto v = parse_sizes("2^0,2^20,2^62,2^4K,2^10B");
  EXPECT_EQ(values(v), (std::vector<std::uint64_t>{1, MiB, std::uint64_t{1} << 62, 16 * KiB, KiB}));
  EXPECT_FALSE(v[3].bytes);
  EXPECT_TRUE(v[4].bytes);
  EXPECT_EQ(texts(v), (std::vector<std::string>{"2^0", "2^20", "2^62", "2^4K", "2^10B"}));
}

TEST(Sizes, WhitespaceAroundItemsIsIgnored) {
  EXPECT_EQ(values(parse_sizes(" 1M , 2M ")), (std::vector<std::uint64_t>{MiB, 2 * MiB}));
}

TEST(Sizes, LargestValue) {
  EXPECT_EQ(parse_sizes("9223372036854775807")[0].value, 9223372036854775807u);
  EXPECT_EQ(parse_sizes("8G")[0].value, 8 * GiB);
}

TEST(Sizes, GeometricRangeKeepsPowerOfTwoTexts) {
  const auto v = parse_sizes("2^10..2^12");
  EXPECT_EQ(values(v), (std::vector<std::uint64_t>{1024, 2048, 4096}));
  EXPECT_EQ(texts(v), (std::vector<std::string>{"2^10", "2^11", "2^12"}));
  const auto w = parse_sizes("2^12..2^30");
  ASSERT_EQ(w.size(), 19u);
  EXPECT_EQ(w.front().text, "2^12");
  EXPECT_EQ(w[5].text, "2^17");
  EXPECT_EQ(w[5].value, std::uint64_t{1} << 17);
  EXPECT_EQ(w.back().value, std::uint64_t{1} << 30);
}

TEST(Sizes, GeometricRangeWithFactor) {
  const auto v = parse_sizes("2^10..2^20:*4");
  EXPECT_EQ(values(v), (std::vector<std::uint64_t>{1u << 10, 1u << 12, 1u << 14, 1u << 16, 1u << 18, 1u << 20}));
  EXPECT_EQ(texts(v)[1], "2^12");
  // The end is included only when reached: 1, 3, 9, 27 (81 > 50).
  EXPECT_EQ(values(parse_sizes("1..50:*3")), (std::vector<std::uint64_t>{1, 3, 9, 27}));
}

TEST(Sizes, GeometricRangeFromNonPowerOfTwo) {
  const auto v = parse_sizes("3..20");
  EXPECT_EQ(values(v), (std::vector<std::uint64_t>{3, 6, 12}));
  EXPECT_EQ(texts(v), (std::vector<std::string>{"3", "6", "12"}));
}

TEST(Sizes, RangeInSuffixUnits) {
  const auto v = parse_sizes("1K..4K");
  EXPECT_EQ(values(v), (std::vector<std::uint64_t>{KiB, 2 * KiB, 4 * KiB}));
  EXPECT_EQ(texts(v), (std::vector<std::string>{"1K", "2K", "4K"}));
  const auto b = parse_sizes("1KiB..1MiB");
  ASSERT_EQ(b.size(), 11u);
  EXPECT_TRUE(b[3].bytes);
  EXPECT_EQ(b[3].text, "8KiB");
  EXPECT_EQ(b[9].text, "512KiB");
  EXPECT_EQ(b.back().text, "1MiB");
  EXPECT_EQ(b.back().value, MiB);
}

TEST(Sizes, ArithmeticRange) {
  const auto v = parse_sizes("1000..5000:+1000");
  EXPECT_EQ(values(v), (std::vector<std::uint64_t>{1000, 2000, 3000, 4000, 5000}));
  EXPECT_EQ(texts(v), (std::vector<std::string>{"1000", "2000", "3000", "4000", "5000"}));
  // End not reached exactly: stops at the last value <= hi.
  EXPECT_EQ(parse_sizes("7..100:+10").back().value, 97u);
  EXPECT_EQ(parse_sizes("7..100:+10").size(), 10u);
}

TEST(Sizes, ArithmeticRangeInBytes) {
  // A suffixed increment of the same kind, and a bare one (counts in the range's unit, bytes here).
  EXPECT_EQ(values(parse_sizes("1MiB..3MiB:+1MiB")), (std::vector<std::uint64_t>{MiB, 2 * MiB, 3 * MiB}));
  const auto v = parse_sizes("4KiB..16KiB:+4096");
  EXPECT_EQ(texts(v), (std::vector<std::string>{"4KiB", "8KiB", "12KiB", "16KiB"}));
  for (const auto& s : v) EXPECT_TRUE(s.bytes);
}

TEST(Sizes, SingleValueRange) { EXPECT_EQ(values(parse_sizes("5..5")), (std::vector<std::uint64_t>{5})); }

TEST(Sizes, ListMixesForms) {
  const auto v = parse_sizes("2^10..2^11,1GiB,7");
  ASSERT_EQ(v.size(), 4u);
  EXPECT_EQ(v[2].value, GiB);
  EXPECT_TRUE(v[2].bytes);
  EXPECT_EQ(v[3].value, 7u);
}

TEST(Sizes, RangeCap) {
  EXPECT_EQ(parse_sizes("1..10000:+1").size(), 10000u);
  EXPECT_THROW((void)parse_sizes("1..10001:+1"), std::invalid_argument);
}

// The error message must quote the offending item and say what is accepted.
void expect_rejected(const std::string& text, const std::string& quoted) {
  try {
    (void)parse_sizes(text);
    ADD_FAILURE() << "accepted \"" << text << "\"";
  } catch (const std::invalid_argument& e) {
    const std::string msg = e.what();
    EXPECT_NE(msg.find("\"" + quoted + "\""), std::string::npos) << "for \"" << text << "\": " << msg;
    EXPECT_NE(msg.find("accepted"), std::string::npos) << msg;
  }
}

TEST(Sizes, Errors) {
  expect_rejected("abc", "abc");
  expect_rejected("1M,abc", "abc");
  expect_rejected("-5", "-5");
  expect_rejected("-1..8", "-1..8");
  expect_rejected("1X", "1X");
  expect_rejected("1kb", "1kb");
  expect_rejected("1.5M", "1.5M");
  expect_rejected("2^", "2^");
  expect_rejected("2^-1", "2^-1");
  expect_rejected("2^63", "2^63");
  expect_rejected("2^62K", "2^62K");
  expect_rejected("9223372036854775808", "9223372036854775808");
  expect_rejected("99999999999999999999999", "99999999999999999999999");
  expect_rejected("16E", "16E");
  expect_rejected("", "");
  expect_rejected("1M,,2M", "1M,,2M");
  expect_rejected("1M,", "1M,");
  expect_rejected(",1M", ",1M");
  expect_rejected("5..1", "5..1");
  expect_rejected("1..8:*1", "1..8:*1");
  expect_rejected("1..8:*0", "1..8:*0");
  expect_rejected("1..8:+0", "1..8:+0");
  expect_rejected("1..8:/2", "1..8:/2");
  expect_rejected("1..8:", "1..8:");
  expect_rejected("1..8:*2K", "1..8:*2K");
  expect_rejected("0..8", "0..8");
  expect_rejected("1K..1MiB", "1K..1MiB");
  expect_rejected("1KiB..4KiB:+1K", "1KiB..4KiB:+1K");
  expect_rejected("1..", "1..");
  expect_rejected("..8", "..8");
  expect_rejected("1..2..3", "1..2..3");
  expect_rejected("4:*2", "4:*2");
  expect_rejected("1..20000:+1", "1..20000:+1");
  expect_rejected("2^20..2^62:+1", "2^20..2^62:+1");
}

TEST(Sizes, ElementsOf) {
  const auto v = parse_sizes("1GiB,2^20");
  EXPECT_EQ(memlab::elements_of(v[0], 4), GiB / 4);
  EXPECT_EQ(memlab::elements_of(v[0], 1), GiB);
  EXPECT_EQ(memlab::elements_of(v[1], 8), MiB);  // an element count stays as it is
  const auto odd = parse_sizes("1026B");
  EXPECT_EQ(memlab::elements_of(odd[0], 2), 513u);
  try {
    (void)memlab::elements_of(odd[0], 4);
    ADD_FAILURE() << "1026 bytes accepted as f32 elements";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("1026B"), std::string::npos) << e.what();
  }
  EXPECT_THROW((void)memlab::elements_of(odd[0], 0), std::invalid_argument);
}

TEST(Sizes, FormatCount) {
  EXPECT_EQ(memlab::format_count(std::uint64_t{1} << 24), "2^24");
  EXPECT_EQ(memlab::format_count(1024), "2^10");
  EXPECT_EQ(memlab::format_count(512), "512");  // below 2^10: decimal reads better
  EXPECT_EQ(memlab::format_count(1000), "1000");
  EXPECT_EQ(memlab::format_count(3 * MiB), "3145728");
  EXPECT_EQ(memlab::format_count(0), "0");
}

TEST(Sizes, FormatBytes) {
  EXPECT_EQ(memlab::format_bytes(0), "0 B");
  EXPECT_EQ(memlab::format_bytes(512), "512 B");
  EXPECT_EQ(memlab::format_bytes(1023), "1023 B");
  EXPECT_EQ(memlab::format_bytes(4096), "4.00 KiB");
  EXPECT_EQ(memlab::format_bytes(3 * GiB / 2), "1.50 GiB");
  EXPECT_EQ(memlab::format_bytes(128 * MiB), "128.00 MiB");
  EXPECT_EQ(memlab::format_bytes(MiB - 1), "1.00 MiB");  // never "1024.00 KiB"
}

// Axis lists (--src-offset, --stride, --ctas): plain counts, ranges count up by one by default.
TEST(AxisLists, CountsCountUpByOne) {
  using memlab::parse_counts;
  EXPECT_EQ(parse_counts("0..3", "--src-offset"), (std::vector<std::uint64_t>{0, 1, 2, 3}));
  EXPECT_EQ(parse_counts("1..32:*2", "--stride"), (std::vector<std::uint64_t>{1, 2, 4, 8, 16, 32}));
  EXPECT_EQ(parse_counts("0,2,8", "--src-offset"), (std::vector<std::uint64_t>{0, 2, 8}));
  EXPECT_EQ(parse_counts("0..8:+4", "--dst-offset"), (std::vector<std::uint64_t>{0, 4, 8}));
}

TEST(AxisLists, ErrorsNameTheFlag) {
  using memlab::parse_counts;
  for (const char* bad : {"", "-1", "2KiB", "x", "3..1"}) {
    try {
      (void)parse_counts(bad, "--stride");
      ADD_FAILURE() << "no error for '" << bad << "'";
    } catch (const std::invalid_argument& e) {
      const std::string msg = e.what();
      EXPECT_EQ(msg.rfind("--stride: invalid value \"", 0), 0u) << msg;
      // The counts' own grammar: no units, ranges count up by one.
      EXPECT_NE(msg.find("counting up by 1"), std::string::npos) << msg;
      EXPECT_EQ(msg.find("B|KiB"), std::string::npos) << msg;
    }
  }
}

TEST(AxisLists, ByteCountsDoubleAndTakeUnits) {
  EXPECT_EQ(memlab::parse_byte_counts("4MiB..16MiB", "--table-bytes"),
            (std::vector<std::uint64_t>{4 * MiB, 8 * MiB, 16 * MiB}));
  EXPECT_EQ(memlab::parse_byte_counts("4096", "--table-bytes"), (std::vector<std::uint64_t>{4096}));
}

TEST(Dtype, NamesSizesAndList) {
  using memlab::dtype;
  EXPECT_EQ(memlab::all_dtypes().size(), 5u);
  for (dtype t : memlab::all_dtypes()) EXPECT_EQ(memlab::parse_dtype(memlab::to_string(t)), t);
  EXPECT_EQ(memlab::parse_dtype("bf16"), dtype::bf16);
  EXPECT_EQ(memlab::parse_dtype("f128"), std::nullopt);
  EXPECT_EQ(memlab::parse_dtype("F32"), std::nullopt);
  EXPECT_EQ(memlab::size_of(dtype::u8), 1u);
  EXPECT_EQ(memlab::size_of(dtype::f16), 2u);
  EXPECT_EQ(memlab::size_of(dtype::bf16), 2u);
  EXPECT_EQ(memlab::size_of(dtype::f32), 4u);
  EXPECT_EQ(memlab::size_of(dtype::f64), 8u);
  EXPECT_EQ(memlab::to_string(dtype::f16), "f16");
}

}  // namespace

namespace {

TEST(ParseShapes, ExtentsJoinedByXInLists) {
  const auto s = memlab::parse_shapes("128x256, 64x64", "--tile", 2);
  ASSERT_EQ(s.size(), 2u);
  EXPECT_EQ(s[0], (std::vector<std::uint64_t>{128, 256}));
  EXPECT_EQ(s[1], (std::vector<std::uint64_t>{64, 64}));
  EXPECT_EQ(memlab::parse_shapes("2^10x2x3", "--shape", 3)[0], (std::vector<std::uint64_t>{1024, 2, 3}));
  for (const char* bad : {"", "128", "128x", "x128", "128x256x4", "1..4x8", "128x-1", "64KiBx2", "128x256,"}) {
    SCOPED_TRACE(bad);
    try {
      (void)memlab::parse_shapes(bad, "--tile", 2);
      ADD_FAILURE() << "accepted";
    } catch (const std::invalid_argument& e) {
      EXPECT_EQ(std::string(e.what()).rfind("--tile: ", 0), 0u) << e.what();
    }
  }
}

}  // namespace
