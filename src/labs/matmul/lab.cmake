# The matmul lab: reuse through tiling, next to cuBLAS (SGEMM and TF32), which it loads at run time
# (harness/cublas_loader.hpp): only its headers are needed here.
target_sources(memlab_labs PRIVATE ${CMAKE_CURRENT_LIST_DIR}/matmul.cu ${CMAKE_CURRENT_LIST_DIR}/model.cpp)
