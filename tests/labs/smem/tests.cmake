# The smem lab's tests: the bank model against the simulator (host), SASS proof, GPU verification.
target_sources(memlab_labs_tests PRIVATE ${CMAKE_CURRENT_LIST_DIR}/test_smem_model.cpp)
target_sources(memlab_sass_tests PRIVATE ${CMAKE_CURRENT_LIST_DIR}/test_smem_sass.cpp)
target_sources(memlab_gpu_tests PRIVATE ${CMAKE_CURRENT_LIST_DIR}/test_smem_gpu.cpp)
