# The matmul lab's tests: shapes, refusals, plans, the error bound and the sample (host); the SASS
# each rung compiled to; every rung x edge shape verified on the GPU.
target_sources(memlab_labs_tests PRIVATE ${CMAKE_CURRENT_LIST_DIR}/test_matmul_plan.cpp)
target_sources(memlab_sass_tests PRIVATE ${CMAKE_CURRENT_LIST_DIR}/test_matmul_sass.cpp)
target_sources(memlab_gpu_tests PRIVATE ${CMAKE_CURRENT_LIST_DIR}/test_matmul_gpu.cpp)
