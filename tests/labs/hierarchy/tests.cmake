# The hierarchy lab's tests: the chain builder, plans and byte counts (host), the dependent chains
# in SASS, and every rung verified on the GPU at small sizes.
target_sources(memlab_labs_tests PRIVATE ${CMAKE_CURRENT_LIST_DIR}/test_hierarchy_model.cpp)
target_sources(memlab_sass_tests PRIVATE ${CMAKE_CURRENT_LIST_DIR}/test_hierarchy_sass.cpp)
target_sources(memlab_gpu_tests PRIVATE ${CMAKE_CURRENT_LIST_DIR}/test_hierarchy_gpu.cpp)
