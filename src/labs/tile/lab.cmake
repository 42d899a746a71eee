# The tile lab: CuTe's copies global -> shared next to memlab's tile movers. Built only where CuTe's
# headers are found: MEMLAB_CUTE_INCLUDE_DIR, else those of the PyPI wheel nvidia-cutlass
# (cutlass_library/source/include). Nothing from CUTLASS lives in this repository.
set(MEMLAB_CUTE_INCLUDE_DIR "" CACHE PATH "Directory holding cute/tensor.hpp (empty: ask python3's cutlass_library)")
set(_memlab_cute_dir "${MEMLAB_CUTE_INCLUDE_DIR}")
if(NOT _memlab_cute_dir)
  memlab_python_path(_memlab_cute_dir
    "import cutlass_library, os; print(os.path.join(os.path.dirname(cutlass_library.__file__), 'source', 'include'))")
endif()

if(_memlab_cute_dir AND EXISTS "${_memlab_cute_dir}/cute/tensor.hpp")
  message(STATUS "memlab: tile lab built, CuTe headers: ${_memlab_cute_dir}")
  set(MEMLAB_TILE_BUILT ON)
  target_sources(memlab_labs PRIVATE ${CMAKE_CURRENT_LIST_DIR}/tile.cu ${CMAKE_CURRENT_LIST_DIR}/model.cpp)
  # SYSTEM: CuTe's own warnings stay out of -Werror=all-warnings. Only tile.cu includes CuTe.
  set_source_files_properties(${CMAKE_CURRENT_LIST_DIR}/tile.cu PROPERTIES
    COMPILE_OPTIONS "-isystem;${_memlab_cute_dir}")
else()
  set(MEMLAB_LAB_tile_MISSING "CuTe headers not found (pip install nvidia-cutlass, then re-run cmake)")
  message(STATUS "memlab: tile lab not built: ${MEMLAB_LAB_tile_MISSING}")
  set(MEMLAB_TILE_BUILT OFF)
endif()
