# The tile lab's tests: tile rules and planning (host), SASS proof, and GPU verification. Only where
# the lab is built (CuTe found: src/labs/tile/lab.cmake sets MEMLAB_TILE_BUILT).
if(MEMLAB_TILE_BUILT)
  target_sources(memlab_labs_tests PRIVATE ${CMAKE_CURRENT_LIST_DIR}/test_tile_plan.cpp)
  target_sources(memlab_gpu_tests PRIVATE ${CMAKE_CURRENT_LIST_DIR}/test_tile_gpu.cpp)
  target_sources(memlab_sass_tests PRIVATE ${CMAKE_CURRENT_LIST_DIR}/test_tile_sass.cpp)
endif()
