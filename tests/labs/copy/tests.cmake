# The copy lab's tests: launch planning (host), SASS proof, and GPU verification.
target_sources(memlab_labs_tests PRIVATE ${CMAKE_CURRENT_LIST_DIR}/test_copy_plan.cpp)
target_sources(memlab_gpu_tests PRIVATE ${CMAKE_CURRENT_LIST_DIR}/test_copy_gpu.cpp)

# memlab::copy, the library (include/memlab/copy.cuh): planning on the host, bytes on the GPU.
target_sources(memlab_labs_tests PRIVATE ${CMAKE_CURRENT_SOURCE_DIR}/library/test_copy_plan.cpp)
target_sources(memlab_gpu_tests PRIVATE ${CMAKE_CURRENT_SOURCE_DIR}/library/test_copy_gpu.cu)
