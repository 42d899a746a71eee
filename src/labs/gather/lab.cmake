# The gather lab: out[i] = table[idx[i]] with the same indices in random or sorted order.
target_sources(memlab_labs PRIVATE ${CMAKE_CURRENT_LIST_DIR}/gather.cu)
