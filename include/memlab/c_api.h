/* memlab/c_api.h: the C ABI of libmemlab, a small compiled library over memlab's header-only one, for C
 * programs and for Python (ctypes: `import memlab`). Plain C89; no CUDA header needed.
 *
 *   int rc = memlab_transpose(dst, src, batch, rows, cols, elem_size, stream);
 *   if (rc != 0) fprintf(stderr, "%s\n", memlab_last_error_message());
 *
 * Every function that can fail returns a status: 0 on success, else the CUDA runtime's error code
 * (cudaError_t: 1 invalid argument, 100 no CUDA-capable device, 35 driver too old, ...), whose name and
 * text memlab_error_name / memlab_error_string give. The calling thread's last failure is also kept:
 * memlab_get_last_error returns and clears it, memlab_last_error_message says what failed and why.
 * Pointers are device memory of the current device (memlab_set_device; the CUDA runtime's current
 * device of the calling thread, shared with any other runtime in the process through the driver's
 * current context). `stream` is a cudaStream_t: NULL is the default stream, (void*)1 the legacy default
 * stream, (void*)2 the per-thread one. The work is enqueued; nothing synchronizes.
 */
#ifndef MEMLAB_C_API_H
#define MEMLAB_C_API_H

#include <stddef.h>

#if defined(_WIN32)
#define MEMLAB_C_API_EXPORT __declspec(dllexport)
#else
#define MEMLAB_C_API_EXPORT __attribute__((visibility("default")))
#endif

#ifdef __cplusplus
extern "C" {
#endif

/* The version of this interface: a new function is a new minor version, a changed one a new ABI. */
#define MEMLAB_C_ABI_VERSION 1

/* MEMLAB_C_ABI_VERSION of the loaded library. */
MEMLAB_C_API_EXPORT int memlab_abi_version(void);
/* memlab's version, "0.1.0". */
MEMLAB_C_API_EXPORT const char* memlab_version(void);

/* Copies `bytes` bytes from src to dst (not overlapping), any alignment: memlab::copy_bytes. */
MEMLAB_C_API_EXPORT int memlab_copy_bytes(void* dst, const void* src, size_t bytes, void* stream);

/* Transposes `batch` row-major matrices of rows x cols elements of elem_size bytes (1, 2, 4 or 8) at src
 * into their cols x rows transposes at dst (not overlapping), any alignment: memlab::transpose_bytes. */
MEMLAB_C_API_EXPORT int memlab_transpose(void* dst, const void* src, size_t batch, size_t rows, size_t cols,
                                         size_t elem_size, void* stream);

/* The path memlab_transpose takes for these addresses and this shape ("aligned", "realign_in",
 * "realign_out", "realign_both", "elem8", "few_cols", "few_rows", "small_matrices", "copy", "none",
 * "unsupported"); host only, needs no GPU. */
MEMLAB_C_API_EXPORT const char* memlab_transpose_path(size_t dst, size_t src, size_t batch, size_t rows, size_t cols,
                                                      size_t elem_size);

/* The calling thread's last failed status (0 if none), cleared by the call. */
MEMLAB_C_API_EXPORT int memlab_get_last_error(void);
/* What the calling thread's last failure was, with the function and the arguments that caused it; "" if
 * none. Valid until the thread's next memlab call. */
MEMLAB_C_API_EXPORT const char* memlab_last_error_message(void);
/* The name ("cudaErrorInvalidValue") and the text ("invalid argument") of a status. */
MEMLAB_C_API_EXPORT const char* memlab_error_name(int status);
MEMLAB_C_API_EXPORT const char* memlab_error_string(int status);

/* The CUDA devices: how many, which is current, make one current. */
MEMLAB_C_API_EXPORT int memlab_device_count(int* count);
MEMLAB_C_API_EXPORT int memlab_get_device(int* device);
MEMLAB_C_API_EXPORT int memlab_set_device(int device);
/* The device that holds the memory at `p` (cudaPointerGetAttributes); cudaErrorInvalidValue for host memory
 * the CUDA runtime does not know, or memory of no device. */
MEMLAB_C_API_EXPORT int memlab_pointer_device(const void* p, int* device);
/* Waits for the work on `stream` (cudaStreamSynchronize). */
MEMLAB_C_API_EXPORT int memlab_stream_synchronize(void* stream);

/* JAX (jax.ffi): an XLA FFI handler that transposes the last two dimensions of its operand (each leading one a
 * batch dimension) into its result, on XLA's stream, through memlab_transpose. Present only in a libmemlab built
 * with jaxlib's FFI headers (CMake found jax.ffi.include_dir()); Python registers it as the CUDA custom call
 * target "memlab_transpose" (python/memlab/_jax.py). The types are XLA's (xla/ffi/api/c_api.h). */
struct XLA_FFI_Error;
struct XLA_FFI_CallFrame;
MEMLAB_C_API_EXPORT struct XLA_FFI_Error* memlab_jax_transpose(struct XLA_FFI_CallFrame* call_frame);

#ifdef __cplusplus
}
#endif

#endif /* MEMLAB_C_API_H */
