# The transfer lab's tests: planning, byte counting, busbw factors and refusals (host), and every
# rung verified on a GPU (the GPU <-> GPU and multi-rank ones where the machine has the GPUs).
target_sources(memlab_labs_tests PRIVATE ${CMAKE_CURRENT_LIST_DIR}/test_transfer_plan.cpp)
target_sources(memlab_gpu_tests PRIVATE ${CMAKE_CURRENT_LIST_DIR}/test_transfer_gpu.cpp)
# A process whose NCCL cannot be loaded: every collective refused with the loader's reason.
add_test(NAME transfer_nccl_unloadable COMMAND memlab_labs_tests --gtest_also_run_disabled_tests
         --gtest_filter=transfer_plan.DISABLED_collectives_are_refused_without_nccl)
set_tests_properties(transfer_nccl_unloadable PROPERTIES LABELS host
                     ENVIRONMENT MEMLAB_NCCL_LIBRARY=libmemlab_no_such_nccl.so.2)
