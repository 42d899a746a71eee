# The async lab: global -> shared paths (LDG+STS, cp.async .ca/.cg, stages, TMA), next to CUB and cudaMemcpy.
target_sources(memlab_labs PRIVATE ${CMAKE_CURRENT_LIST_DIR}/async.cu ${CMAKE_CURRENT_LIST_DIR}/model.cpp)
