#include "check/nvml.hpp"

#include <dlfcn.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <charconv>
#include <fstream>
#include <chrono>
#include <mutex>
#include <thread>
#include <vector>

#include <fmt/format.h>
#include <fmt/ranges.h>

namespace memlab::check {

namespace {

const std::pair<std::uint64_t, std::string_view> event_names[] = {{clock_event::gpu_idle, "idle"},
                                                                  {clock_event::applications_clocks, "application clocks"},
                                                                  {clock_event::sw_power_cap, "SW power cap"},
                                                                  {clock_event::hw_slowdown, "HW slowdown"},
                                                                  {clock_event::sync_boost, "sync boost"},
                                                                  {clock_event::sw_thermal, "SW thermal"},
                                                                  {clock_event::hw_thermal, "HW thermal"},
                                                                  {clock_event::hw_power_brake, "HW power brake"},
                                                                  {clock_event::display_clocks, "display clocks"}};

}  // namespace

std::string clock_event_text(std::uint64_t mask) {
  std::vector<std::string> out;
  std::uint64_t known = 0;
  for (const auto& [bit, name] : event_names) {
    known |= bit;
    if ((mask & bit) != 0) out.emplace_back(name);
  }
  if ((mask & ~known) != 0) out.push_back(fmt::format("0x{:x}", mask & ~known));
  return out.empty() ? "none" : fmt::format("{}", fmt::join(out, ", "));
}

std::optional<std::uint64_t> clock_events_named(std::string_view text) {
  if (text == "none") return 0;
  std::uint64_t mask = 0;
  while (!text.empty()) {
    const auto comma = text.find(", ");
    const std::string_view word = text.substr(0, comma);
    text = comma == std::string_view::npos ? std::string_view{} : text.substr(comma + 2);
    bool found = false;
    for (const auto& [bit, name] : event_names) {
      if (name != word) continue;
      mask |= bit;
      found = true;
    }
    if (!found && word.starts_with("0x")) {
      std::uint64_t v = 0;
      const auto [end, ec] = std::from_chars(word.data() + 2, word.data() + word.size(), v, 16);
      found = ec == std::errc{} && end == word.data() + word.size();
      mask |= v;
    }
    if (!found) return std::nullopt;
  }
  return mask;
}

void add_processes(std::vector<gpu_process>& found, const std::vector<gpu_process>& more) {
  for (const auto& p : more) {
    auto it = std::find_if(found.begin(), found.end(), [&](const gpu_process& q) { return q.pid == p.pid; });
    if (it == found.end()) {
      found.push_back(p);
    } else if (p.used_mib && (!it->used_mib || *p.used_mib > *it->used_mib)) {
      it->used_mib = p.used_mib;
    }
  }
}

namespace {

// The entry points used, by their C ABI (nvml.h is not needed to build).
using device_t = void*;
using init_fn = int (*)();
using handle_fn = int (*)(const char*, device_t*);
using uint_fn = int (*)(device_t, unsigned*);
using reasons_fn = int (*)(device_t, unsigned long long*);
using ecc_fn = int (*)(device_t, int, int, unsigned long long*);  // (device, error type, counter type, count)
using text_fn = int (*)(device_t, char*, unsigned);                // serial, UUID
using system_text_fn = int (*)(char*, unsigned);                   // the driver's version
using process_name_fn = int (*)(unsigned, char*, unsigned);        // (pid, name, length)
// nvmlProcessInfo_t of the _v3 entry points (nvml.h since CUDA 11.x: v2 and v3 alike).
struct process_info {
  unsigned pid;
  unsigned long long used_bytes;
  unsigned gpu_instance, compute_instance;
};
using processes_fn = int (*)(device_t, unsigned*, process_info*);
constexpr unsigned long long nvml_value_not_available = ~0ull;
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
  text_fn serial = nullptr, uuid = nullptr;
  system_text_fn driver = nullptr;
  process_name_fn process_name = nullptr;
  processes_fn compute = nullptr, graphics = nullptr;
  std::thread sampler;
  std::atomic<bool> stopping{false};
  std::mutex m;
  nvml_samples samples;

  // The other processes on the GPU now: NVML's compute and graphics lists, this process left out.
  std::vector<gpu_process> others(const std::string& seen, bool* self = nullptr) const {
    std::vector<gpu_process> out;
    for (processes_fn list : {compute, graphics}) {
      if (list == nullptr || dev == nullptr) continue;
      std::vector<process_info> info(64);
      unsigned count = static_cast<unsigned>(info.size());
      if (list(dev, &count, info.data()) != 0) continue;
      for (unsigned i = 0; i < count && i < info.size(); ++i) {
        if (static_cast<long>(info[i].pid) == static_cast<long>(::getpid())) {
          if (self != nullptr) *self = true;
          continue;
        }
        gpu_process p{.pid = info[i].pid, .name = name_of(info[i].pid), .seen = seen};
        if (info[i].used_bytes != nvml_value_not_available)
          p.used_mib = static_cast<double>(info[i].used_bytes) / (1024.0 * 1024.0);
        add_processes(out, {p});
      }
    }
    return out;
  }

  std::string name_of(unsigned pid) const {
    std::ifstream comm(fmt::format("/proc/{}/comm", pid));
    std::string name;
    if (comm && std::getline(comm, name) && !name.empty()) return name;
    char buf[256] = {};
    if (process_name != nullptr && process_name(pid, buf, sizeof buf - 1) == 0) {
      const std::string full = buf;
      return full.substr(full.find_last_of('/') + 1);
    }
    return "";
  }

  void sample_once() {
    nvml_samples s;
    unsigned long long r = 0;
    unsigned gen = 0, width = 0;
    const bool got_r = reasons != nullptr && reasons(dev, &r) == 0;
    const bool got_g = cur_gen != nullptr && cur_gen(dev, &gen) == 0;
    const bool got_w = cur_width != nullptr && cur_width(dev, &width) == 0;
    std::vector<gpu_process> seen;
    bool self = false;
    if (samples.samples % 10 == 0) seen = others("during", &self);  // every 100 ms or so
    std::lock_guard lock(m);
    add_processes(samples.processes, seen);
    samples.self_seen = samples.self_seen || self;
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
  s.serial = reinterpret_cast<text_fn>(sym("nvmlDeviceGetSerial"));
  s.uuid = reinterpret_cast<text_fn>(sym("nvmlDeviceGetUUID"));
  s.driver = reinterpret_cast<system_text_fn>(sym("nvmlSystemGetDriverVersion"));
  s.process_name = reinterpret_cast<process_name_fn>(sym("nvmlSystemGetProcessName"));
  s.compute = reinterpret_cast<processes_fn>(sym("nvmlDeviceGetComputeRunningProcesses_v3"));
  s.graphics = reinterpret_cast<processes_fn>(sym("nvmlDeviceGetGraphicsRunningProcesses_v3"));
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

nvml_identity nvml_gpu::identity() const {
  const auto& s = *s_;
  nvml_identity id;
  if (!s.why.empty() || s.dev == nullptr) return id;
  char buf[128] = {};
  if (s.uuid != nullptr && s.uuid(s.dev, buf, sizeof buf - 1) == 0) id.uuid = buf;
  std::fill(std::begin(buf), std::end(buf), '\0');
  if (s.serial != nullptr && s.serial(s.dev, buf, sizeof buf - 1) == 0) id.serial = buf;
  std::fill(std::begin(buf), std::end(buf), '\0');
  if (s.driver != nullptr && s.driver(buf, sizeof buf - 1) == 0) id.driver = buf;
  return id;
}

std::vector<gpu_process> nvml_gpu::processes(const std::string& seen) const {
  if (!s_->why.empty()) return {};
  return s_->others(seen);
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
