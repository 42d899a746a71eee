# The transfer lab: host <-> device, GPU <-> GPU, and NCCL's collectives. NCCL is optional: found
# at MEMLAB_NCCL_ROOT (include/nccl.h, lib/libnccl.so*), else in PyPI's nvidia-nccl-cu13 (python3's
# site-packages nvidia/nccl), else the system's (Debian's libnccl-dev). Without it the lab builds
# without its nccl_* rungs and `memlab list` says so. Nothing from NCCL lives in this repository.
set(MEMLAB_NCCL_ROOT "" CACHE PATH "Directory holding include/nccl.h and lib/libnccl.so* (empty: python3's nvidia-nccl, then the system)")
set(_memlab_nccl_hints "${MEMLAB_NCCL_ROOT}")
if(NOT _memlab_nccl_hints)
  memlab_python_path(_memlab_nccl_hints "import nvidia.nccl, os; print(list(nvidia.nccl.__path__)[0])")
endif()
find_path(MEMLAB_NCCL_INCLUDE_DIR nccl.h HINTS ${_memlab_nccl_hints} PATH_SUFFIXES include)
# The wheel ships libnccl.so.2 only (no libnccl.so link): name it.
find_library(MEMLAB_NCCL_LIBRARY NAMES nccl libnccl.so.2 NAMES_PER_DIR HINTS ${_memlab_nccl_hints} PATH_SUFFIXES lib lib64)

target_sources(memlab_labs PRIVATE ${CMAKE_CURRENT_LIST_DIR}/transfer.cu ${CMAKE_CURRENT_LIST_DIR}/model.cpp)
if(MEMLAB_NCCL_INCLUDE_DIR AND MEMLAB_NCCL_LIBRARY)
  message(STATUS "memlab: transfer lab with NCCL: ${MEMLAB_NCCL_LIBRARY}")
  set_source_files_properties(${CMAKE_CURRENT_LIST_DIR}/transfer.cu PROPERTIES
    COMPILE_OPTIONS "-isystem;${MEMLAB_NCCL_INCLUDE_DIR}" COMPILE_DEFINITIONS "MEMLAB_HAVE_NCCL=1")
  target_link_libraries(memlab_labs PUBLIC ${MEMLAB_NCCL_LIBRARY})
  # The wheel's library is not on the loader's path: the binaries find it where it was found.
  get_filename_component(_memlab_nccl_libdir "${MEMLAB_NCCL_LIBRARY}" DIRECTORY)
  set(CMAKE_BUILD_RPATH ${CMAKE_BUILD_RPATH} ${_memlab_nccl_libdir})
  set(MEMLAB_TRANSFER_NCCL ON)
else()
  message(STATUS "memlab: transfer lab without NCCL (its nccl_* rungs not built): pip install nvidia-nccl-cu13")
  set_source_files_properties(${CMAKE_CURRENT_LIST_DIR}/transfer.cu PROPERTIES COMPILE_DEFINITIONS "MEMLAB_HAVE_NCCL=0")
  set(MEMLAB_TRANSFER_NCCL OFF)
endif()
