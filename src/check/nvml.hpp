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
};

// One GPU's NVML, by PCI bus id ("0000:1B:00.0").
class nvml_gpu {
 public:
  explicit nvml_gpu(const std::string& bus_id);
  ~nvml_gpu();
  nvml_gpu(const nvml_gpu&) = delete;
  nvml_gpu& operator=(const nvml_gpu&) = delete;

  [[nodiscard]] nvml_readings read() const;
  // Samples every `period_ms` on a thread from start() until stop().
  void start(int period_ms = 10);
  nvml_samples stop();

 private:
  struct state;
  std::unique_ptr<state> s_;
};

}  // namespace memlab::check
