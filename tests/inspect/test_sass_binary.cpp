// SASS proof: what every lab variant really compiled to, read from the memlab binary itself, for
// every SASS architecture it carries: that every kernel every variant launches is there (each lab
// asserts its own widths in tests/labs/<lab>/). Needs cuobjdump, not a GPU.
#include <algorithm>
#include <cstdlib>
#include <iostream>
#include <map>
#include <string>
#include <vector>

#include "inspect/sass_fixture.hpp"

namespace memlab::inspect {
namespace {

// MEMLAB_CUDA_ARCHS: the build's CMAKE_CUDA_ARCHITECTURES, comma-separated: "80-real,90-real,100".
TEST_F(sass_proof, binary_carries_sass_for_every_targeted_arch) {
  std::string archs = MEMLAB_CUDA_ARCHS;
  ASSERT_FALSE(archs.empty());
  ASSERT_FALSE(reports.empty());
  const std::vector<std::string>& listed = reports.begin()->second.archs;  // what cuobjdump lists, read or not
  std::size_t start = 0;
  while (start <= archs.size()) {
    const std::size_t end = std::min(archs.find(',', start), archs.size());
    const std::string entry = archs.substr(start, end - start);
    const std::string number = entry.substr(0, entry.find('-'));
    if (entry.find("-virtual") == std::string::npos) {
      EXPECT_NE(std::find(listed.begin(), listed.end(), "sm_" + number), listed.end()) << entry;
    }
    start = end + 1;
  }
}

// Every kernel of every variant of every lab, by symbol, has SASS on every built arch: a kernel
// that was renamed, never registered or not compiled fails here (an empty report cannot pass).
TEST_F(sass_proof, every_kernel_of_every_variant_is_found_on_every_arch) {
  ASSERT_FALSE(reports.empty());
  const auto labels = cli::kernel_labels(all_labs());
  std::map<std::string, std::size_t> kernels;  // lab -> kernels found, over every arch
  for (const auto& label : labels) {
    if (!lab_is_read(label.lab)) continue;  // another process of this arch reads its cubins (MEMLAB_SASS_LABS)
    SCOPED_TRACE(label.lab + " " + label.variant);
    EXPECT_FALSE(label.mangled.empty() && label.instantiated_with.empty()) << "a variant with kernels but no names";
    for (const auto& [arch, r] : reports) {
      for (const auto& mangled : label.mangled) {
        ASSERT_FALSE(mangled.empty()) << "a kernel of this variant was never registered with the CUDA runtime";
        const bool found = std::any_of(r.kernels.begin(), r.kernels.end(), [&](const labeled_kernel& k) {
          return k.code.mangled == mangled && k.lab == label.lab && k.variant == label.variant;
        });
        EXPECT_TRUE(found) << arch << ": no SASS for " << demangle(mangled);
        kernels[label.lab] += found;
      }
      for (const auto& type : label.instantiated_with) {
        const bool found = std::any_of(r.kernels.begin(), r.kernels.end(), [&](const labeled_kernel& k) {
          return k.lab == label.lab && k.variant == label.variant && k.code.name.find(type) != std::string::npos;
        });
        EXPECT_TRUE(found) << arch << ": no kernel instantiated with " << type;
      }
    }
  }
  // An empty report cannot pass: every lab built has kernels of its own.
  for (const lab* l : all_labs()) {
    if (lab_is_read(l->name)) {
      EXPECT_GT(kernels[std::string(l->name)], 0u) << l->name << ": no kernel found";
    }
  }
}

}  // namespace
}  // namespace memlab::inspect

// Reads the binary once (one cuobjdump per SASS arch, side by side) before any test runs (see sass_fixture.hpp for what a failure
// to read it means).
int main(int argc, char** argv) {
  ::testing::InitGoogleTest(&argc, argv);
  using namespace memlab::inspect;
  const bool ci = std::getenv("CI") != nullptr;
  if (find_cuobjdump().empty()) {
    const std::string why = "cuobjdump not found (pip install nvidia-cuda-cuobjdump nvidia-cuda-nvdisasm)";
    if (ci) {
      std::cerr << "FAILED: CI must read the SASS: " << why << "\n";
      return 1;
    }
    std::cout << "SKIPPED: " << why << "\n";
    return 77;
  }
  try {
    sass_proof::reports = inspect_every_arch(MEMLAB_BINARY, memlab::cli::kernel_labels(memlab::all_labs()), sass_arch(),
                                             false, sass_labs());
  } catch (const std::exception& e) {
    std::cerr << "FAILED: cannot read the SASS of " << MEMLAB_BINARY << ": " << e.what() << "\n";
    return 1;
  }
  return RUN_ALL_TESTS();
}
