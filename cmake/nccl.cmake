# NCCL, optional, and never linked: the transfer lab's collectives and a run of one process per GPU open
# libnccl.so.2 on first use (src/harness/nccl_loader.hpp), so that memlab starts and runs every other lab
# on a machine without it. The build needs NCCL's headers only: found at MEMLAB_NCCL_ROOT (include/nccl.h),
# else in PyPI's nvidia-nccl-cu13 (python3's site-packages nvidia/nccl), else the system's (Debian's
# libnccl-dev). The library found beside them goes on the binaries' RUNPATH, where the loader looks for it
# (the wheel's folder is on no other path). Sets MEMLAB_NCCL_FOUND (the headers), MEMLAB_NCCL_INCLUDE_DIR
# and MEMLAB_NCCL_LIBRARY (may be NOTFOUND). Nothing from NCCL lives in this repository.
set(MEMLAB_NCCL_ROOT "" CACHE PATH "Directory holding include/nccl.h and lib/libnccl.so* (empty: python3's nvidia-nccl, then the system)")
set(_memlab_nccl_hints "${MEMLAB_NCCL_ROOT}")
if(NOT _memlab_nccl_hints)
  memlab_python_path(_memlab_nccl_hints "import nvidia.nccl, os; print(list(nvidia.nccl.__path__)[0])")
endif()
find_path(MEMLAB_NCCL_INCLUDE_DIR nccl.h HINTS ${_memlab_nccl_hints} PATH_SUFFIXES include)
# The wheel ships libnccl.so.2 only (no libnccl.so link): name it.
find_library(MEMLAB_NCCL_LIBRARY NAMES nccl libnccl.so.2 NAMES_PER_DIR HINTS ${_memlab_nccl_hints} PATH_SUFFIXES lib lib64)
if(MEMLAB_NCCL_INCLUDE_DIR)
  set(MEMLAB_NCCL_FOUND ON)
  if(MEMLAB_NCCL_LIBRARY)
    message(STATUS "memlab: NCCL headers ${MEMLAB_NCCL_INCLUDE_DIR}, loaded at run time from ${MEMLAB_NCCL_LIBRARY}")
    get_filename_component(_memlab_nccl_libdir "${MEMLAB_NCCL_LIBRARY}" DIRECTORY)
    set(CMAKE_BUILD_RPATH ${CMAKE_BUILD_RPATH} ${_memlab_nccl_libdir})
  else()
    message(STATUS "memlab: NCCL headers ${MEMLAB_NCCL_INCLUDE_DIR}, no library beside them: libnccl.so.2 is looked "
                   "for at run time on the loader's path")
  endif()
else()
  set(MEMLAB_NCCL_FOUND OFF)
  message(STATUS "memlab: NCCL's headers not found (pip install nvidia-nccl-cu13): no nccl_* rungs, no run of one "
                 "process per GPU")
endif()
