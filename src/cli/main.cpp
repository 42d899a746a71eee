// memlab: every memory-access technique as a ladder of verified, timed kernel variants.
#include <CLI/CLI.hpp>

#include <iostream>

#include "cli/commands.hpp"
#include "memlab_git_sha.hpp"

namespace {

constexpr const char* footer =
    "Exit codes: 0 ok; 1 a verification failed (or a CUDA error stopped the run); 2 usage error;\n"
    "3 no usable CUDA device.\n"
    "Bytes in every report are the fewest the job must move through device memory: reads + writes.";

std::string joined_command(int argc, char** argv) {
  std::string s;
  for (int i = 0; i < argc; ++i) {
    if (i > 0) s += ' ';
    s += i == 0 ? "memlab" : argv[i];
  }
  return s;
}

}  // namespace

// A CUDA device ordinal: a whole number >= 0 (CLI11's NonNegativeNumber would print DBL_MAX as the bound).
const CLI::Validator device_ordinal(
    [](std::string& s) -> std::string {
      const bool digits = !s.empty() && s.find_first_not_of("0123456789") == std::string::npos;
      return digits && s.size() < 6 ? "" : "--device takes a device ordinal: 0, 1, ... (got '" + s + "')";
    },
    "ORDINAL");

int main(int argc, char** argv) {
  using namespace memlab::cli;
  CLI::App app{"memlab: what a GPU's memory system delivers for each access pattern, kernel by kernel.\n"
               "Each lab is a ladder of kernel variants; each is verified against a CPU reference,\n"
               "then timed cold (L2 flushed) and in batches, and placed against the device's peak.",
               "memlab"};
  app.footer(footer);
  app.set_version_flag("--version", std::string(MEMLAB_VERSION) + " (" + MEMLAB_GIT_SHA + ")");
  app.require_subcommand(1);

  list_options lo;
  auto* list = app.add_subcommand("list", "List the labs, their variants and what each one teaches (no GPU needed)");
  list->add_option("lab", lo.labs, "Labs to list (default: all)");
  list->add_option("--format", lo.format, "table or json")->check(CLI::IsMember({"table", "json"}));

  run_options ro;
  ro.request.command = joined_command(argc, argv);
  auto* run = app.add_subcommand("run", "Verify and time lab variants on the GPU");
  run->add_option("lab", ro.request.labs, "Labs to run (default: all)");
  run->add_option("--variant", ro.request.variants, "Variants to run, comma-separated (default: all)")->delimiter(',');
  run->add_option("--dtype", ro.dtype_names, "Element types, comma-separated: u8, f16, bf16, f32, f64 (default: the lab's)")
      ->delimiter(',');
  run->add_option("--sizes", ro.request.sizes,
                  "Problem sizes: element counts (4096, 1M, 2^20) or bytes (64MiB, 1GiB); lists (1M,64M) and\n"
                  "ranges (2^12..2^30 doubles; 2^10..2^20:*4; 1000..5000:+1000). Default: the lab's");
  run->add_option("--src-offset", ro.src_offset,
                  "Bytes added to the source pointer (misalignment), a list: 2; 0,2,8; 0..15 counts up by 1;\n"
                  "1..16:*2 doubles. Offsets that are not a multiple of the element size are skipped.\n"
                  "Axis of: copy, stride, tile (the lab decides the default)");
  run->add_option("--dst-offset", ro.dst_offset, "Bytes added to the destination pointer; same grammar as --src-offset");
  run->add_option("--stride", ro.stride, "Elements between the accesses of neighbouring threads: 1..32 (stride lab)");
  run->add_option("--ctas", ro.ctas, "CTAs to launch; 0 = one per tile of the whole problem (tile lab)");
  run->add_option("--tile", ro.tile, "Tile shapes ROWSxCOLS, comma-separated: 128x256 (tile lab)");
  run->add_option("--table-bytes", ro.table_bytes,
                  "Sizes of the table gathered from, in bytes: 4MiB..1GiB:*4 (gather lab)");
  run->add_option("--device", ro.request.device, "CUDA device ordinal")->check(device_ordinal);
  run->add_option("--max-time", ro.request.max_time_s,
                  "Time budget per case in seconds, split between cold and batch timing; sampling stops\n"
                  "earlier once the relative spread (IQR / median) is under 0.5%")
      ->check(CLI::PositiveNumber)
      ->capture_default_str();
  run->add_flag("!--no-verify", ro.request.verify, "Skip the CPU-reference check (results say verified: false)");
  run->add_flag("!--quiet", ro.request.progress, "No progress lines on stderr");
  run->add_option("--format", ro.format, "stdout format: table, csv, json, md")->capture_default_str();
  run->add_option("--out", ro.outs, "Also write results to FILE; format from its extension (.json .csv .md .txt).\n"
                                    "Repeat for several files");

  inspect_options io;
  auto* inspect = app.add_subcommand(
      "inspect", "Show the memory instructions each variant compiled to (SASS via cuobjdump; no GPU needed)");
  inspect->add_option("lab", io.lab, "Lab to show (default: all)");
  inspect->add_option("--binary", io.binary, "Binary to read (default: this memlab executable)");
  inspect->add_option("--arch", io.arch, "SASS architecture, e.g. sm_90 (default: the newest in the binary)");
  inspect->add_flag("--all-kernels", io.all_kernels, "Also list kernels that belong to no lab variant");
  inspect->add_option("--format", io.format, "table or json")->capture_default_str();

  device_options dopt;
  auto* device = app.add_subcommand("device", "Print the GPU, its theoretical peak and the measured copy ceiling");
  device->add_option("--device", dopt.device, "CUDA device ordinal")->check(device_ordinal);
  device->add_flag("!--no-ceiling", dopt.ceiling, "Skip the cudaMemcpy ceiling measurement");
  device->add_option("--format", dopt.format, "table or json")->capture_default_str();

  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForAllHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForVersion& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    app.exit(e);  // prints the message and a pointer to --help
    return exit_usage;
  }

  try {
    if (*list) return list_command(lo);
    if (*run) return run_command(std::move(ro));
    if (*inspect) return inspect_command(io);
    if (*device) return device_command(dopt);
  } catch (const std::exception& e) {
    std::cerr << "memlab: error: " << e.what() << "\n";
    return exit_failed;
  }
  return exit_usage;
}
