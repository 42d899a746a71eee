# The smem lab: shared-memory banks, wavefronts and conflicts, with a closed-form model per request.
target_sources(memlab_labs PRIVATE ${CMAKE_CURRENT_LIST_DIR}/smem.cu ${CMAKE_CURRENT_LIST_DIR}/model.cpp)
