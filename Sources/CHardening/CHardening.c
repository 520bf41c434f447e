#include "CHardening.h"
#include <sys/prctl.h>

int odr_set_non_dumpable(void) {
  return prctl(PR_SET_DUMPABLE, 0, 0, 0, 0);
}
