# The copy lab: memlab's ladder, memlab::copy (auto), and the peers cudaMemcpy, CUB and Thrust.
target_sources(memlab_labs PRIVATE ${CMAKE_CURRENT_LIST_DIR}/copy.cu)
