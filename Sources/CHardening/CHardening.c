#define _GNU_SOURCE
#include "CHardening.h"
#include <malloc.h>
#include <sys/prctl.h>
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <spawn.h>
#include <unistd.h>

int odr_set_non_dumpable(void) {
  return prctl(PR_SET_DUMPABLE, 0, 0, 0, 0);
}

int odr_map_large_buffers(void) {
  return mallopt(M_MMAP_THRESHOLD, 128 * 1024);
}

int odr_open_pseudo_terminal(int *master, int *slave) {
  int m = posix_openpt(O_RDWR | O_NOCTTY | O_CLOEXEC);
  if (m < 0) return -1;
  char name[128];
  if (grantpt(m) != 0 || unlockpt(m) != 0 || ptsname_r(m, name, sizeof name) != 0) {
    int saved = errno;
    close(m);
    errno = saved;
    return -1;
  }
  int s = open(name, O_RDWR | O_NOCTTY | O_CLOEXEC);
  if (s < 0) {
    int saved = errno;
    close(m);
    errno = saved;
    return -1;
  }
  *master = m;
  *slave = s;
  return 0;
}

int odr_pseudo_terminal_name(int master, char *name, unsigned long length) {
  return ptsname_r(master, name, length);
}

short odr_posix_spawn_setsid(void) {
  return POSIX_SPAWN_SETSID;
}
