# The transpose lab: out = in^T through shared memory (conflicted, padded, swizzled, vectorized),
# next to cuBLAS (geam; cuBLASLt's matrix transform for f16) and a copy of the same bytes.
target_sources(memlab_labs PRIVATE ${CMAKE_CURRENT_LIST_DIR}/transpose.cu ${CMAKE_CURRENT_LIST_DIR}/model.cpp)
target_link_libraries(memlab_labs PUBLIC CUDA::cublas CUDA::cublasLt)
