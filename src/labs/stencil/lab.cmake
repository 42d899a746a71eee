# The stencil lab: an 8th-order derivative across stitched domains, 1D and 3D (halos, branches,
# LDGSTS, 16-byte accesses, overlap).
target_sources(memlab_labs PRIVATE ${CMAKE_CURRENT_LIST_DIR}/stencil.cu ${CMAKE_CURRENT_LIST_DIR}/model.cpp)
