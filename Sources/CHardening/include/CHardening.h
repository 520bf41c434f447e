#ifndef ODR_CHARDENING_H
#define ODR_CHARDENING_H

/// prctl(PR_SET_DUMPABLE, 0): prctl is variadic, which Swift cannot call.
int odr_set_non_dumpable(void);

/// mallopt(M_MMAP_THRESHOLD, 128 KiB): allocations of 128 KiB and more are
/// mapped and unmapped one by one, whatever glibc's adaptive threshold
/// would do (<malloc.h> is not part of Swift's Glibc module).
int odr_map_large_buffers(void);

/// A new pseudo-terminal pair, both ends close-on-exec and neither the
/// caller's controlling terminal (posix_openpt, grantpt, unlockpt and
/// ptsname_r need _XOPEN_SOURCE, which Swift's Glibc module leaves out).
/// 0 on success, else -1 with errno set.
int odr_open_pseudo_terminal(int *master, int *slave);

/// The path of the slave of the pseudo-terminal `master` (ptsname_r),
/// NUL-terminated in `name`. 0 on success.
int odr_pseudo_terminal_name(int master, char *name, unsigned long length);

/// POSIX_SPAWN_SETSID (a GNU extension Swift's Glibc module leaves out):
/// the child starts a session of its own, before its file actions run.
short odr_posix_spawn_setsid(void);

#endif
