# The layout lab: one field of three-field points from an array of structures, a structure of
# arrays, and whole structures loaded with 16-byte accesses.
target_sources(memlab_labs PRIVATE ${CMAKE_CURRENT_LIST_DIR}/layout.cu ${CMAKE_CURRENT_LIST_DIR}/model.cpp)
