// A case on the device: the buffers its plan declares, the lab's setup, and the reset before every
// verified run (fresh random inputs, poisoned outputs).
#include "harness/error.hpp"
#include "harness/fill.hpp"
#include "harness/lab.hpp"

namespace memlab {

case_ctx prepare_case(const lab& l, const variant& v, const case_params& p, const device_info& dev,
                      const case_plan& plan) {
  case_ctx c;
  c.l = &l;
  c.v = &v;
  c.p = p;
  c.dev = dev;
  c.plan = plan;
  for (const auto& b : plan.buffers) {
    c.buffers.emplace_back(b.bytes + (b.role == buffer_role::output ? guard_bytes : 0));
    c.seeds.push_back(0);
  }
  if (l.setup != nullptr) l.setup(c);
  return c;
}

void reset(case_ctx& c) {
  for (std::size_t i = 0; i < c.buffers.size(); ++i) {
    auto& b = c.buffers[i];
    switch (c.plan.buffers[i].role) {
      case buffer_role::input:
        c.seeds[i] = next_seed();
        fill_random(b.data(), b.size(), c.seeds[i], nullptr);
        break;
      case buffer_role::output:
        if (b.size() > 0) MEMLAB_CUDA_CHECK(cudaMemsetAsync(b.data(), poison_byte, b.size(), nullptr));
        break;
      case buffer_role::scratch: break;
    }
  }
  MEMLAB_CUDA_CHECK(cudaDeviceSynchronize());
}

}  // namespace memlab
