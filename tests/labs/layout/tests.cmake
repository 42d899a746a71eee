# The layout lab's tests: sector counts (host), SASS widths, GPU verification.
target_sources(memlab_labs_tests PRIVATE ${CMAKE_CURRENT_LIST_DIR}/test_layout_plan.cpp)
target_sources(memlab_sass_tests PRIVATE ${CMAKE_CURRENT_LIST_DIR}/test_layout_sass.cpp)
target_sources(memlab_gpu_tests PRIVATE ${CMAKE_CURRENT_LIST_DIR}/test_layout_gpu.cpp)
