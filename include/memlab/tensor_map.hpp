// memlab/tensor_map.hpp: TMA tensor maps on the host, without linking libcuda.
//
//   CUtensorMap map;
//   CUresult r = memlab::encode_tensor_map_2d(&map, CU_TENSOR_MAP_DATA_TYPE_FLOAT32, base,
//                                             cols, rows, row_pitch_bytes, box_cols, box_rows);
//
// cuTensorMapEncodeTiled is a driver API function. memlab links only the CUDA runtime, which hands
// out driver entry points by name (cudaGetDriverEntryPointByVersion, the non-deprecated form of
// cudaGetDriverEntryPoint, asked for the CUDA 12.0 ABI of the function). Errors are returned,
// never thrown: CUDA_ERROR_NOT_FOUND when the driver has no such entry point.
// The map is 2D, row-major, no interleave, no swizzle, no L2 promotion, out-of-bounds elements read
// as zero. TMA's rules (checked by the driver, which returns CUDA_ERROR_INVALID_VALUE): base
// 16-byte aligned, row pitch a multiple of 16 bytes, box extents 1..256 with box_cols x element
// size a multiple of 16 bytes. The map describes memory of the current device; pass it to a kernel
// as a `const __grid_constant__ CUtensorMap` parameter.
#pragma once

#include <cuda.h>
#include <cuda_runtime_api.h>

#include <cstdint>

namespace memlab {

namespace detail {

// A driver function by name, at the ABI of CUDA `version` (12000 = 12.0); nullptr if absent.
inline void* driver_entry_point(const char* name, unsigned version) {
  void* fn = nullptr;
  cudaDriverEntryPointQueryResult found{};
  if (cudaGetDriverEntryPointByVersion(name, &fn, version, cudaEnableDefault, &found) != cudaSuccess ||
      found != cudaDriverEntryPointSuccess) {
    (void)cudaGetLastError();  // leave no sticky error behind
    return nullptr;
  }
  return fn;
}

using encode_tiled_fn = CUresult (*)(CUtensorMap*, CUtensorMapDataType, cuuint32_t, void*, const cuuint64_t*,
                                     const cuuint64_t*, const cuuint32_t*, const cuuint32_t*, CUtensorMapInterleave,
                                     CUtensorMapSwizzle, CUtensorMapL2promotion, CUtensorMapFloatOOBfill);

}  // namespace detail

// A tensor map over `rows` rows of `cols` elements of `type`, rows `row_pitch_bytes` apart
// starting at `base`, moved in boxes of box_cols x box_rows elements.
inline CUresult encode_tensor_map_2d(CUtensorMap* map, CUtensorMapDataType type, const void* base, std::uint64_t cols,
                                     std::uint64_t rows, std::uint64_t row_pitch_bytes, std::uint32_t box_cols,
                                     std::uint32_t box_rows) {
  static const auto encode =
      reinterpret_cast<detail::encode_tiled_fn>(detail::driver_entry_point("cuTensorMapEncodeTiled", 12000));
  if (encode == nullptr) return CUDA_ERROR_NOT_FOUND;
  const cuuint64_t dims[2] = {cols, rows};
  const cuuint64_t strides[1] = {row_pitch_bytes};  // of every dimension but the innermost, in bytes
  const cuuint32_t box[2] = {box_cols, box_rows};
  const cuuint32_t element_strides[2] = {1, 1};
  return encode(map, type, 2, const_cast<void*>(base), dims, strides, box, element_strides,
                CU_TENSOR_MAP_INTERLEAVE_NONE, CU_TENSOR_MAP_SWIZZLE_NONE, CU_TENSOR_MAP_L2_PROMOTION_NONE,
                CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE);
}

}  // namespace memlab
