#ifndef ODR_CHARDENING_H
#define ODR_CHARDENING_H

/// prctl(PR_SET_DUMPABLE, 0): prctl is variadic, which Swift cannot call.
int odr_set_non_dumpable(void);

/// mallopt(M_MMAP_THRESHOLD, 128 KiB): allocations of 128 KiB and more are
/// mapped and unmapped one by one, whatever glibc's adaptive threshold
/// would do (<malloc.h> is not part of Swift's Glibc module).
int odr_map_large_buffers(void);

#endif
