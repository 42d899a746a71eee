# The stride lab: coalescing (strided element copies) and the offset sweep of a 16-byte copy.
target_sources(memlab_gpu PRIVATE
  ${CMAKE_CURRENT_LIST_DIR}/stride_lab.cpp
  ${CMAKE_CURRENT_LIST_DIR}/kernels.cu)
target_compile_definitions(memlab_gpu PUBLIC MEMLAB_LAB_STRIDE)
