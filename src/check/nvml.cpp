#include "check/nvml.hpp"

#include <dlfcn.h>

#include <atomic>
#include <chrono>
#include <mutex>
#include <thread>
#include <vector>

#include <fmt/format.h>
#include <fmt/ranges.h>

namespace memlab::check {

std::string clock_event_text(std::uint64_t mask) {
  using namespace clock_event;
  static const std::pair<std::uint64_t, const char*> names[] = {{gpu_idle, "idle"},
                                                                {applications_clocks, "application clocks"},
                                                                {sw_power_cap, "SW power cap"},
                                                                {hw_slowdown, "HW slowdown"},
                                                                {sync_boost, "sync boost"},
                                                                {sw_thermal, "SW thermal"},
                                                                {hw_thermal, "HW thermal"},
                                                                {hw_power_brake, "HW power brake"},
                                                                {display_clocks, "display clocks"}};
  std::vector<std::string> out;
  std::uint64_t known = 0;
  for (const auto& [bit, name] : names) {
    known |= bit;
    if ((mask & bit) != 0) out.emplace_back(name);
  }
  if ((mask & ~known) != 0) out.push_back(fmt::format("0x{:x}", mask & ~known));
  return out.empty() ? "none" : fmt::format("{}", fmt::join(out, ", "));
}

namespace {

// The entry points used, by their C ABI (nvml.h is not needed to build).
using device_t = void*;
using init_fn = int (*)();
using handle_fn = int (*)(const char*, device_t*);
using uint_fn = int (*)(device_t, unsigned*);
using reasons_fn = int (*)(device_t, unsigned long long*);
using ecc_fn = int (*)(device_t, int, int, unsigned long long*);  // (device, error type, counter type, count)
constexpr int nvml_uncorrected = 1, nvml_volatile = 0, nvml_aggregate = 1;
constexpr int nvml_error_not_supported = 3;

}  // namespace

struct nvml_gpu::state {
  void* lib = nullptr;
  bool initialized = false;
  device_t dev = nullptr;
  std::string why;
  init_fn shutdown = nullptr;
  uint_fn max_gen = nullptr, max_width = nullptr, cur_gen = nullptr, cur_width = nullptr;
  reasons_fn reasons = nullptr;
  ecc_fn ecc = nullptr;
  std::thread sampler;
  std::atomic<bool> stopping{false};
  std::mutex m;
  nvml_samples samples;

  void sample_once() {
    nvml_samples s;
    unsigned long long r = 0;
    unsigned gen = 0, width = 0;
    const bool got_r = reasons != nullptr && reasons(dev, &r) == 0;
    const bool got_g = cur_gen != nullptr && cur_gen(dev, &gen) == 0;
    const bool got_w = cur_width != nullptr && cur_width(dev, &width) == 0;
    std::lock_guard lock(m);
    if (!got_r && !got_g && !got_w) return;
    ++samples.samples;
    if (got_r) samples.reasons |= r;
    if (got_g) samples.gen = std::max(samples.gen, static_cast<int>(gen));
    if (got_w) samples.width = std::max(samples.width, static_cast<int>(width));
  }
};

nvml_gpu::nvml_gpu(const std::string& bus_id) : s_(std::make_unique<state>()) {
  auto& s = *s_;
  s.lib = dlopen("libnvidia-ml.so.1", RTLD_NOW | RTLD_LOCAL);
  if (s.lib == nullptr) {
    s.why = "NVML not found (libnvidia-ml.so.1: no NVIDIA driver here)";
    return;
  }
  const auto sym = [&](const char* name) { return dlsym(s.lib, name); };
  auto init = reinterpret_cast<init_fn>(sym("nvmlInit_v2"));
  s.shutdown = reinterpret_cast<init_fn>(sym("nvmlShutdown"));
  auto handle = reinterpret_cast<handle_fn>(sym("nvmlDeviceGetHandleByPciBusId_v2"));
  s.max_gen = reinterpret_cast<uint_fn>(sym("nvmlDeviceGetMaxPcieLinkGeneration"));
  s.max_width = reinterpret_cast<uint_fn>(sym("nvmlDeviceGetMaxPcieLinkWidth"));
  s.cur_gen = reinterpret_cast<uint_fn>(sym("nvmlDeviceGetCurrPcieLinkGeneration"));
  s.cur_width = reinterpret_cast<uint_fn>(sym("nvmlDeviceGetCurrPcieLinkWidth"));
  s.reasons = reinterpret_cast<reasons_fn>(sym("nvmlDeviceGetCurrentClocksEventReasons"));
  if (s.reasons == nullptr) s.reasons = reinterpret_cast<reasons_fn>(sym("nvmlDeviceGetCurrentClocksThrottleReasons"));
  s.ecc = reinterpret_cast<ecc_fn>(sym("nvmlDeviceGetTotalEccErrors"));
  if (init == nullptr || s.shutdown == nullptr || handle == nullptr) {
    s.why = "NVML lacks nvmlInit_v2 or nvmlDeviceGetHandleByPciBusId_v2 (a driver too old)";
    return;
  }
  if (const int e = init(); e != 0) {
    s.why = fmt::format("nvmlInit failed (NVML error {})", e);
    return;
  }
  s.initialized = true;
  if (const int e = handle(bus_id.c_str(), &s.dev); e != 0) {
    s.why = fmt::format("NVML has no GPU at {} (NVML error {})", bus_id, e);
    s.dev = nullptr;
  }
}

nvml_gpu::~nvml_gpu() {
  if (s_->sampler.joinable()) (void)stop();
  if (s_->initialized) s_->shutdown();
  if (s_->lib != nullptr) dlclose(s_->lib);
}

nvml_readings nvml_gpu::read() const {
  const auto& s = *s_;
  nvml_readings r;
  if (!s.why.empty()) {
    r.why = s.why;
    return r;
  }
  unsigned gen = 0, width = 0;
  if (s.max_gen != nullptr && s.max_gen(s.dev, &gen) == 0) r.max_gen = static_cast<int>(gen);
  if (s.max_width != nullptr && s.max_width(s.dev, &width) == 0) r.max_width = static_cast<int>(width);
  if (s.ecc == nullptr) {
    r.ecc_why = "NVML lacks nvmlDeviceGetTotalEccErrors";
    return r;
  }
  unsigned long long v = 0, a = 0;
  const int ev = s.ecc(s.dev, nvml_uncorrected, nvml_volatile, &v);
  const int ea = s.ecc(s.dev, nvml_uncorrected, nvml_aggregate, &a);
  if (ev == 0) r.ecc_volatile = v;
  if (ea == 0) r.ecc_aggregate = a;
  if (ev != 0 || ea != 0) {
    const int e = ev != 0 ? ev : ea;
    r.ecc_why = e == nvml_error_not_supported ? "ECC is off or not reported on this GPU"
                                              : fmt::format("NVML error {} reading ECC counts", e);
  }
  return r;
}

void nvml_gpu::start(int period_ms) {
  auto& s = *s_;
  {
    std::lock_guard lock(s.m);
    s.samples = {};
  }
  if (!s.why.empty()) return;
  s.stopping = false;
  s.sampler = std::thread([&s, period_ms] {
    while (!s.stopping) {
      s.sample_once();
      std::this_thread::sleep_for(std::chrono::milliseconds(period_ms));
    }
  });
}

nvml_samples nvml_gpu::stop() {
  auto& s = *s_;
  if (s.sampler.joinable()) {
    s.stopping = true;
    s.sampler.join();
  }
  std::lock_guard lock(s.m);
  nvml_samples out = s.samples;
  if (!s.why.empty()) {
    out.why = s.why;
  } else if (out.samples == 0) {
    out.why = "NVML gave no clock-event reasons or PCIe readings";
  }
  return out;
}

}  // namespace memlab::check
