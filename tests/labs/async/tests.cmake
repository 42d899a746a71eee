# The async lab's tests: rules and plans (host), SASS proof, GPU verification, and the divergent
# commit's group count measured on the GPU.
target_sources(memlab_labs_tests PRIVATE ${CMAKE_CURRENT_LIST_DIR}/test_async_plan.cpp)
target_sources(memlab_sass_tests PRIVATE ${CMAKE_CURRENT_LIST_DIR}/test_async_sass.cpp)
target_sources(memlab_gpu_tests PRIVATE ${CMAKE_CURRENT_LIST_DIR}/test_async_gpu.cpp
                                        ${CMAKE_CURRENT_LIST_DIR}/test_async_groups_gpu.cu)
