#include "CHardening.h"
#include <malloc.h>
#include <sys/prctl.h>

int odr_set_non_dumpable(void) {
  return prctl(PR_SET_DUMPABLE, 0, 0, 0, 0);
}

int odr_map_large_buffers(void) {
  return mallopt(M_MMAP_THRESHOLD, 128 * 1024);
}
