// memlab: every memory-access technique as a ladder of verified, timed kernel variants.
#include "cli/commands.hpp"
#include "harness/registry.hpp"

int main(int argc, char** argv) {
  return memlab::cli::main_with(argc, argv, {memlab::all_labs(), memlab::missing_labs()});
}
