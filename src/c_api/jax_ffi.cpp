// libmemlab's XLA FFI handler: memlab_transpose for JAX (`memlab.transpose(jax_array)`, also under jax.jit).
// Built only where jaxlib's FFI headers were found (jax.ffi.include_dir(); CMakeLists.txt). Python registers
// the symbol memlab_jax_transpose with jax.ffi.register_ffi_target(..., platform="CUDA") and calls it with
// jax.ffi.ffi_call (python/memlab/_jax.py). XLA hands over its stream and row-major device buffers; the
// handler forwards to the C ABI, so the checks and the error messages are memlab_transpose's own.
//
// The operand is one matrix or a batch: rank >= 2, every leading dimension a batch dimension (what vmap's
// "broadcast_all" adds), the last two transposed. The result's shape must be that transpose.
#include <cstddef>
#include <cstdint>
#include <string>

#include "memlab/c_api.h"
#include "xla/ffi/api/ffi.h"

namespace ffi = xla::ffi;

namespace {

bool packed_below_a_byte(ffi::DataType t) {
  switch (t) {
    case ffi::DataType::S1:
    case ffi::DataType::S2:
    case ffi::DataType::S4:
    case ffi::DataType::U1:
    case ffi::DataType::U2:
    case ffi::DataType::U4:
    case ffi::DataType::F4E2M1FN: return true;
    default: return false;
  }
}

std::string shape_of(ffi::Span<const std::int64_t> dims) {
  std::string s = "(";
  for (std::size_t i = 0; i < dims.size(); ++i) s += (i ? ", " : "") + std::to_string(dims[i]);
  return s + (dims.size() == 1 ? ",)" : ")");
}

ffi::Error transpose(void* stream, ffi::AnyBuffer x, ffi::Result<ffi::AnyBuffer> y) {
  const auto in = x.dimensions();
  const auto out = y->dimensions();
  const std::size_t rank = in.size();
  if (rank < 2) {
    return ffi::Error::InvalidArgument("memlab_jax_transpose: x has shape " + shape_of(in) +
                                       ": a matrix or a batch of matrices is needed");
  }
  if (packed_below_a_byte(x.element_type())) {
    return ffi::Error::InvalidArgument(
        "memlab_jax_transpose: elements narrower than a byte (int4, float4, ...) "
        "are packed: memlab.transpose moves elements of 1, 2, 4 or 8 bytes");
  }
  bool matches = out.size() == rank && y->element_type() == x.element_type() && out[rank - 2] == in[rank - 1] &&
                 out[rank - 1] == in[rank - 2];
  std::size_t batch = 1;
  for (std::size_t i = 0; i + 2 < rank; ++i) {
    batch *= static_cast<std::size_t>(in[i]);
    matches = matches && out[i] == in[i];
  }
  if (!matches) {
    return ffi::Error::InvalidArgument("memlab_jax_transpose: the result has shape " + shape_of(out) +
                                       ", not the transpose of x's " + shape_of(in));
  }
  const auto rows = static_cast<std::size_t>(in[rank - 2]), cols = static_cast<std::size_t>(in[rank - 1]);
  if (batch == 0 || rows == 0 || cols == 0) return ffi::Error::Success();
  if (memlab_transpose(y->untyped_data(), x.untyped_data(), batch, rows, cols, ffi::ByteWidth(x.element_type()),
                       stream) != 0) {
    const std::string why = memlab_last_error_message();
    const int status = memlab_get_last_error();
    return ffi::Error(status == 1 ? ffi::ErrorCode::kInvalidArgument : ffi::ErrorCode::kInternal, why);
  }
  return ffi::Error::Success();
}

}  // namespace

// Declared in memlab/c_api.h with the export attribute (everything else in libmemlab is hidden); defined here.
XLA_FFI_DEFINE_HANDLER_SYMBOL(
    memlab_jax_transpose, transpose,
    ffi::Ffi::Bind().Ctx<ffi::PlatformStream<void*>>().Arg<ffi::AnyBuffer>().Ret<ffi::AnyBuffer>());
