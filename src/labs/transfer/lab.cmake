# The transfer lab: host <-> device, GPU <-> GPU, and NCCL's collectives. NCCL is optional
# (cmake/nccl.cmake finds it for the harness too): without it the lab builds without its nccl_* rungs
# and `memlab list` says so.
target_sources(memlab_labs PRIVATE ${CMAKE_CURRENT_LIST_DIR}/transfer.cu ${CMAKE_CURRENT_LIST_DIR}/model.cpp)
