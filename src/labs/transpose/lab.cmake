# The transpose lab: out = in^T through shared memory (conflicted, padded, swizzled, vectorized),
# next to cuBLAS (geam; cuBLASLt's matrix transform for f16), loaded at run time
# (harness/cublas_loader.hpp), and a copy of the same bytes.
target_sources(memlab_labs PRIVATE ${CMAKE_CURRENT_LIST_DIR}/transpose.cu ${CMAKE_CURRENT_LIST_DIR}/model.cpp)
