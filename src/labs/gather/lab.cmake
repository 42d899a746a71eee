# The gather lab: out[i] = table[idx[i]] with the same indices in random or sorted order.
target_sources(memlab_gpu PRIVATE
  ${CMAKE_CURRENT_LIST_DIR}/gather_lab.cpp
  ${CMAKE_CURRENT_LIST_DIR}/kernels.cu)
target_compile_definitions(memlab_gpu PUBLIC MEMLAB_LAB_GATHER)
