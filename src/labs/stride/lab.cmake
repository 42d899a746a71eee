# The stride lab: coalescing (strided element copies) and the offset sweep of a 16-byte copy.
target_sources(memlab_labs PRIVATE ${CMAKE_CURRENT_LIST_DIR}/stride.cu ${CMAKE_CURRENT_LIST_DIR}/model.cpp)
