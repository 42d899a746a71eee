#include "harness/link.hpp"

#include <cuda_runtime_api.h>
#include <dlfcn.h>

#include <algorithm>
#include <cctype>
#include <charconv>
#include <fstream>

namespace memlab {

double pcie_lane_gbps(int gen) {
  switch (gen) {
    case 1: return 2.5 * 8.0 / 10.0 / 8.0;
    case 2: return 5.0 * 8.0 / 10.0 / 8.0;
    case 3: return 8.0 * 128.0 / 130.0 / 8.0;
    case 4: return 16.0 * 128.0 / 130.0 / 8.0;
    case 5: return 32.0 * 128.0 / 130.0 / 8.0;
    case 6: return 64.0 * 242.0 / 256.0 / 8.0;
    default: return 0;
  }
}

std::optional<int> pcie_gen_of_speed(std::string_view s) {
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.front()))) s.remove_prefix(1);
  double gts = 0;
  const auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), gts);
  if (ec != std::errc{} || std::string_view(end, static_cast<std::size_t>(s.data() + s.size() - end)).find("GT/s") ==
                               std::string_view::npos) {
    return std::nullopt;
  }
  constexpr double rates[] = {2.5, 5.0, 8.0, 16.0, 32.0, 64.0};
  for (int g = 0; g < 6; ++g) {
    if (gts > rates[g] * 0.99 && gts < rates[g] * 1.01) return g + 1;
  }
  return std::nullopt;
}

double nvlink_link_gbps(unsigned nvml_version, int cc_major) {
  switch (nvml_version) {
    case 1: return 20;
    case 2:
    case 3:
    case 4:
    case 5:
    case 6: return 25;
    case 7: return cc_major == 9 ? 25 : 50;
    default: return 0;
  }
}

namespace {

// The few NVML entry points used, by their C ABI (nvml.h is not needed to build).
using nvml_device = void*;
using nvml_init_fn = int (*)();
using nvml_handle_fn = int (*)(const char*, nvml_device*);
using nvml_uint_fn = int (*)(nvml_device, unsigned*);
using nvml_link_fn = int (*)(nvml_device, unsigned, unsigned*);  // state (an enum, int-sized) or version
constexpr unsigned nvml_max_nvlinks = 18;                        // NVML_NVLINK_MAX_LINKS
// nvmlDeviceGetFieldValues and its nvmlFieldValue_t, by layout (nvml.h): NVML_FI_DEV_NVLINK_GET_SPEED
// (164) with scopeId = the link gives its speed in MB/s (an H100's: 26562, what `nvidia-smi nvlink -s`
// prints as 26.562 GB/s).
struct nvml_field_value {
  unsigned field_id, scope_id;
  long long timestamp, latency_usec;
  int value_type, nvml_return;
  union {
    double d;
    unsigned ui;
    unsigned long ul;
    unsigned long long ull;
    long long sll;
    int si;
  } value;
};
using nvml_fields_fn = int (*)(nvml_device, int, nvml_field_value*);
constexpr unsigned nvml_fi_nvlink_get_speed = 164;
// nvmlPciInfo_t, by layout, for the far end of a link.
struct nvml_pci_info {
  char bus_id_legacy[16];
  unsigned domain, bus, device, pci_device_id, pci_subsystem_id;
  char bus_id[32];
};
using nvml_remote_pci_fn = int (*)(nvml_device, unsigned, nvml_pci_info*);
using nvml_remote_type_fn = int (*)(nvml_device, unsigned, int*);  // 0 GPU, 1 IBM NPU, 2 NVSwitch
constexpr int nvml_nvlink_device_type_switch = 2;

// A PCI bus id as CUDA writes it ("0000:1B:00.0"), from NVML's (which may have 8 digits of domain).
std::string short_bus_id(const char* id) {
  std::string s(id);
  if (s.size() > 12 && s.compare(0, 4, "0000") == 0) s = s.substr(4);
  for (char& c : s) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  return s;
}

std::optional<link_figures> from_nvml(const std::string& bus_id, int cc_major) {
  void* lib = dlopen("libnvidia-ml.so.1", RTLD_NOW | RTLD_LOCAL);
  if (lib == nullptr) return std::nullopt;
  const auto sym = [lib](const char* name) { return dlsym(lib, name); };
  auto init = reinterpret_cast<nvml_init_fn>(sym("nvmlInit_v2"));
  auto shutdown = reinterpret_cast<nvml_init_fn>(sym("nvmlShutdown"));
  auto handle = reinterpret_cast<nvml_handle_fn>(sym("nvmlDeviceGetHandleByPciBusId_v2"));
  auto max_gen = reinterpret_cast<nvml_uint_fn>(sym("nvmlDeviceGetMaxPcieLinkGeneration"));
  auto max_width = reinterpret_cast<nvml_uint_fn>(sym("nvmlDeviceGetMaxPcieLinkWidth"));
  auto link_state = reinterpret_cast<nvml_link_fn>(sym("nvmlDeviceGetNvLinkState"));
  auto link_version = reinterpret_cast<nvml_link_fn>(sym("nvmlDeviceGetNvLinkVersion"));
  auto fields = reinterpret_cast<nvml_fields_fn>(sym("nvmlDeviceGetFieldValues"));
  auto remote_pci = reinterpret_cast<nvml_remote_pci_fn>(sym("nvmlDeviceGetNvLinkRemotePciInfo_v2"));
  auto remote_type = reinterpret_cast<nvml_remote_type_fn>(sym("nvmlDeviceGetNvLinkRemoteDeviceType"));
  std::optional<link_figures> out;
  if (init != nullptr && shutdown != nullptr && handle != nullptr && max_gen != nullptr && max_width != nullptr &&
      init() == 0) {
    nvml_device dev = nullptr;
    unsigned gen = 0, width = 0;
    if (handle(bus_id.c_str(), &dev) == 0 && max_gen(dev, &gen) == 0 && max_width(dev, &width) == 0) {
      link_figures f;
      f.source = "nvml";
      f.pcie_gen = static_cast<int>(gen);
      f.pcie_width = static_cast<int>(width);
      f.pcie_gbps = pcie_lane_gbps(f.pcie_gen) * width;
      for (unsigned l = 0; link_state != nullptr && link_version != nullptr && l < nvml_max_nvlinks; ++l) {
        unsigned active = 0, version = 0;
        if (link_state(dev, l, &active) != 0 || active == 0) continue;  // no such link, or down
        if (link_version(dev, l, &version) != 0) continue;
        ++f.nvlink_links;
        // The link's data rate, by version (the roof); NVML's reading of its speed, the line rate, beside
        // it, and the rate only where the version's data rate is not known here.
        double line = 0;
        nvml_field_value v{};
        v.field_id = nvml_fi_nvlink_get_speed;
        v.scope_id = l;
        if (fields != nullptr && fields(dev, 1, &v) == 0 && v.nvml_return == 0 && v.value.ui > 0) {
          line = v.value.ui / 1000.0;  // MB/s
        }
        double gbps = nvlink_link_gbps(version, cc_major);
        std::string from = "NVLink version";
        if (gbps == 0 && line > 0) {
          gbps = line;
          from = "NVML line rate";
        }
        f.nvlink_gbps += gbps;
        if (f.nvlink_link_gbps == 0) {
          f.nvlink_link_gbps = gbps;
          f.nvlink_rate_from = from;
          f.nvlink_line_gbps = line;
        }
        int type = -1;
        if (remote_type != nullptr && remote_type(dev, l, &type) == 0 && type == nvml_nvlink_device_type_switch) {
          f.nvlink_switch = true;
        } else if (nvml_pci_info pci{}; remote_pci != nullptr && remote_pci(dev, l, &pci) == 0) {
          f.nvlink_gpus.push_back(short_bus_id(pci.bus_id));
        }
      }
      out = f;
    }
    shutdown();
  }
  dlclose(lib);
  return out;
}

std::string read_line(const std::string& path) {
  std::ifstream in(path);
  std::string line;
  std::getline(in, line);
  return line;
}

std::optional<link_figures> from_sysfs(std::string bus_id) {
  std::transform(bus_id.begin(), bus_id.end(), bus_id.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  const std::string dir = "/sys/bus/pci/devices/" + bus_id + "/";
  const auto gen = pcie_gen_of_speed(read_line(dir + "max_link_speed"));
  const std::string width_text = read_line(dir + "max_link_width");
  int width = 0;
  std::from_chars(width_text.data(), width_text.data() + width_text.size(), width);
  if (!gen || width <= 0) return std::nullopt;
  link_figures f;
  f.source = "sysfs";
  f.pcie_gen = *gen;
  f.pcie_width = width;
  f.pcie_gbps = pcie_lane_gbps(*gen) * width;
  return f;
}

}  // namespace

link_figures read_links(int ordinal) {
  char id[32] = {};
  if (cudaDeviceGetPCIBusId(id, sizeof id, ordinal) != cudaSuccess) {
    (void)cudaGetLastError();
    return {};
  }
  int cc_major = 0;
  if (cudaDeviceGetAttribute(&cc_major, cudaDevAttrComputeCapabilityMajor, ordinal) != cudaSuccess)
    (void)cudaGetLastError();
  if (auto f = from_nvml(id, cc_major)) return *f;
  if (auto f = from_sysfs(id)) return *f;
  return {};
}

}  // namespace memlab
