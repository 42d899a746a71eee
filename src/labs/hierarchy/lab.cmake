# The hierarchy lab: latency by pointer chase and bandwidth per memory level, with a host model of
# the chain and the plans (model.cpp) that the host tests replay.
target_sources(memlab_labs PRIVATE ${CMAKE_CURRENT_LIST_DIR}/chase.cu ${CMAKE_CURRENT_LIST_DIR}/stream.cu
               ${CMAKE_CURRENT_LIST_DIR}/model.cpp)
