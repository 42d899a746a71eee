# The matmul lab: reuse through tiling, next to cuBLAS (SGEMM and TF32).
target_sources(memlab_labs PRIVATE ${CMAKE_CURRENT_LIST_DIR}/matmul.cu ${CMAKE_CURRENT_LIST_DIR}/model.cpp)
target_link_libraries(memlab_labs PUBLIC CUDA::cublas)
