# NCCL, optional: the transfer lab's collectives and a run of one process per GPU need it. Found at
# MEMLAB_NCCL_ROOT (include/nccl.h, lib/libnccl.so*), else in PyPI's nvidia-nccl-cu13 (python3's
# site-packages nvidia/nccl), else the system's (Debian's libnccl-dev). Sets MEMLAB_NCCL_FOUND,
# MEMLAB_NCCL_INCLUDE_DIR and MEMLAB_NCCL_LIBRARY. Nothing from NCCL lives in this repository.
set(MEMLAB_NCCL_ROOT "" CACHE PATH "Directory holding include/nccl.h and lib/libnccl.so* (empty: python3's nvidia-nccl, then the system)")
set(_memlab_nccl_hints "${MEMLAB_NCCL_ROOT}")
if(NOT _memlab_nccl_hints)
  memlab_python_path(_memlab_nccl_hints "import nvidia.nccl, os; print(list(nvidia.nccl.__path__)[0])")
endif()
find_path(MEMLAB_NCCL_INCLUDE_DIR nccl.h HINTS ${_memlab_nccl_hints} PATH_SUFFIXES include)
# The wheel ships libnccl.so.2 only (no libnccl.so link): name it.
find_library(MEMLAB_NCCL_LIBRARY NAMES nccl libnccl.so.2 NAMES_PER_DIR HINTS ${_memlab_nccl_hints} PATH_SUFFIXES lib lib64)
if(MEMLAB_NCCL_INCLUDE_DIR AND MEMLAB_NCCL_LIBRARY)
  set(MEMLAB_NCCL_FOUND ON)
  message(STATUS "memlab: NCCL: ${MEMLAB_NCCL_LIBRARY}")
  # The wheel's library is not on the loader's path: the binaries find it where it was found.
  get_filename_component(_memlab_nccl_libdir "${MEMLAB_NCCL_LIBRARY}" DIRECTORY)
  set(CMAKE_BUILD_RPATH ${CMAKE_BUILD_RPATH} ${_memlab_nccl_libdir})
else()
  set(MEMLAB_NCCL_FOUND OFF)
  message(STATUS "memlab: NCCL not found (pip install nvidia-nccl-cu13): no nccl_* rungs, no run of one process per GPU")
endif()
