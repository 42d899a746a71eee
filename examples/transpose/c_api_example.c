/* libmemlab from C: the version, the path a transpose takes (no GPU needed), an error with its message,
 * and whether CUDA sees a GPU. Exit 0 when all is well, 3 without a GPU (after the checks that need none). */
#include <memlab/c_api.h>

#include <stdio.h>
#include <string.h>

int main(void) {
  int count = 0;
  if (memlab_abi_version() != MEMLAB_C_ABI_VERSION) return 1;
  printf("libmemlab %s, C ABI %d\n", memlab_version(), memlab_abi_version());
  if (strcmp(memlab_transpose_path(0x10000, 0x20000, 1, 12289, 3001, 4), "realign_both") != 0) return 1;
  if (memlab_transpose((void*)0x10000, (const void*)0x20000, 1, 4, 4, 3, NULL) == 0) return 1; /* 3-byte elements */
  printf("refused as it should be: %s\n", memlab_last_error_message());
  if (memlab_get_last_error() == 0 || memlab_get_last_error() != 0) return 1; /* read once, then cleared */
  if (memlab_device_count(&count) != 0 || count == 0) {
    printf("no GPU: %s\n", memlab_last_error_message());
    return 3;
  }
  return 0;
}
