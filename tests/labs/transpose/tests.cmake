# The transpose lab's tests: the sector and bank model (host), SASS widths, GPU verification.
target_sources(memlab_labs_tests PRIVATE ${CMAKE_CURRENT_LIST_DIR}/test_transpose_plan.cpp)
target_sources(memlab_sass_tests PRIVATE ${CMAKE_CURRENT_LIST_DIR}/test_transpose_sass.cpp)
target_sources(memlab_gpu_tests PRIVATE ${CMAKE_CURRENT_LIST_DIR}/test_transpose_gpu.cpp)
