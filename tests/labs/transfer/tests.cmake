# The transfer lab's tests: planning, byte counting, busbw factors and refusals (host), and every
# rung verified on a GPU (the GPU <-> GPU and multi-rank ones where the machine has the GPUs).
target_sources(memlab_labs_tests PRIVATE ${CMAKE_CURRENT_LIST_DIR}/test_transfer_plan.cpp)
target_sources(memlab_gpu_tests PRIVATE ${CMAKE_CURRENT_LIST_DIR}/test_transfer_gpu.cpp)
