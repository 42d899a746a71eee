// What memlab check reads from NVML (libnvidia-ml.so.1, loaded with dlopen as harness/link.cpp does:
// no build-time dependency; without a driver every reading says why it is missing): uncorrected ECC
// counts, the PCIe link's maximum, and, sampled on a thread while a GPU's cases run, its clock-event
// (throttle) reasons and the PCIe generation and width the link trains to under load (an idle link
// trains down, so a reading at rest says nothing).
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace memlab::check {

// NVML's clock-event reason bits (nvml.h, nvmlClocksEventReason*).
namespace clock_event {
inline constexpr std::uint64_t gpu_idle = 0x1, applications_clocks = 0x2, sw_power_cap = 0x4, hw_slowdown = 0x8,
                               sync_boost = 0x10, sw_thermal = 0x20, hw_thermal = 0x40, hw_power_brake = 0x80,
                               display_clocks = 0x100;
// A failure: the hardware slowed the clocks (a thermal or power emergency, an external signal).
inline constexpr std::uint64_t failing = hw_slowdown | hw_thermal | hw_power_brake;
// A warning: the driver held the clocks under the power cap or for temperature.
inline constexpr std::uint64_t warning = sw_power_cap | sw_thermal;
}  // namespace clock_event
// The reasons of `mask` in words ("HW slowdown, SW power cap"); "none" for 0.
std::string clock_event_text(std::uint64_t mask);
// The mask clock_event_text wrote ("none": 0); nullopt for words it does not write.
std::optional<std::uint64_t> clock_events_named(std::string_view text);

// Another process on a GPU (NVML's compute and graphics processes, the check's own left out).
struct gpu_process {
  long pid = 0;
  std::string name;                   // its command name (/proc/PID/comm, else NVML's); "" when unknown
  std::optional<double> used_mib;     // device memory it holds, MiB; nullopt when NVML does not say
  std::string seen;                   // "before" the check's work on the GPU, or "during" it
};
// `found` with the processes of `more` added (a process seen twice keeps its first sighting and
// the most memory it held).
void add_processes(std::vector<gpu_process>& found, const std::vector<gpu_process>& more);

struct nvml_identity {
  std::string uuid, serial, driver;  // "" where NVML does not say
};

struct nvml_readings {
  std::string why;  // non-empty: NVML could not be read (then nothing below is)
  std::optional<std::uint64_t> ecc_volatile, ecc_aggregate;  // uncorrected; nullopt: ECC off or not reported
  std::string ecc_why;
  int max_gen = 0, max_width = 0;  // the most the PCIe link trains to
};

struct nvml_samples {
  std::string why;  // non-empty: no samples
  int samples = 0;
  std::uint64_t reasons = 0;  // every reason seen, OR-ed
  int gen = 0, width = 0;     // the highest current PCIe generation and width seen
  std::vector<gpu_process> processes;  // other processes seen while sampling
  bool self_seen = false;              // this process was among NVML's (its PID namespace is NVML's)
};

// One GPU's NVML, by PCI bus id ("0000:1B:00.0").
class nvml_gpu {
 public:
  explicit nvml_gpu(const std::string& bus_id);
  ~nvml_gpu();
  nvml_gpu(const nvml_gpu&) = delete;
  nvml_gpu& operator=(const nvml_gpu&) = delete;

  [[nodiscard]] nvml_readings read() const;
  [[nodiscard]] nvml_identity identity() const;
  // The processes on the GPU now, this one left out (`seen`: "before" or "during").
  [[nodiscard]] std::vector<gpu_process> processes(const std::string& seen) const;
  // Samples every `period_ms` on a thread from start() until stop().
  void start(int period_ms = 10);
  nvml_samples stop();

 private:
  struct state;
  std::unique_ptr<state> s_;
};

}  // namespace memlab::check
