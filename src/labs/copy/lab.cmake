# The copy lab: memlab's ladder, memlab::copy (auto), and the peers cudaMemcpy, CUB and Thrust.
target_sources(memlab_gpu PRIVATE
  ${CMAKE_CURRENT_LIST_DIR}/copy_lab.cpp
  ${CMAKE_CURRENT_LIST_DIR}/kernels.cu
  ${CMAKE_CURRENT_LIST_DIR}/peers.cu)
