# The transfer lab: host <-> device, GPU <-> GPU, and NCCL's collectives, one concern a file (routes.hpp).
# NCCL's headers are optional (cmake/nccl.cmake finds them for the harness too): without them the lab builds
# without its nccl_* rungs and `memlab list` says so. NCCL itself is never linked: it is loaded on first use.
target_sources(memlab_labs PRIVATE
  ${CMAKE_CURRENT_LIST_DIR}/transfer.cu
  ${CMAKE_CURRENT_LIST_DIR}/host.cpp
  ${CMAKE_CURRENT_LIST_DIR}/peer.cu
  ${CMAKE_CURRENT_LIST_DIR}/collectives.cpp
  ${CMAKE_CURRENT_LIST_DIR}/ranks.cpp
  ${CMAKE_CURRENT_LIST_DIR}/engines.cu
  ${CMAKE_CURRENT_LIST_DIR}/checks.cu
  ${CMAKE_CURRENT_LIST_DIR}/model.cpp)
