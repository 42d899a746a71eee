# The stencil lab's tests: geometry, sectors, tolerance and plans (host), SASS proof (widths and
# branch structure), and GPU verification of every variant over edge shapes.
target_sources(memlab_labs_tests PRIVATE ${CMAKE_CURRENT_LIST_DIR}/test_stencil_plan.cpp)
target_sources(memlab_sass_tests PRIVATE ${CMAKE_CURRENT_LIST_DIR}/test_stencil_sass.cpp)
target_sources(memlab_gpu_tests PRIVATE ${CMAKE_CURRENT_LIST_DIR}/test_stencil_gpu.cpp)

# memlab::halo, the library's tile-with-halo mover (include/memlab/halo.cuh), on the GPU.
target_sources(memlab_gpu_tests PRIVATE ${CMAKE_CURRENT_SOURCE_DIR}/library/test_halo_gpu.cu)
