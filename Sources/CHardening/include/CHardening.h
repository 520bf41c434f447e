#ifndef ODR_CHARDENING_H
#define ODR_CHARDENING_H

/// prctl(PR_SET_DUMPABLE, 0): prctl is variadic, which Swift cannot call.
int odr_set_non_dumpable(void);

#endif
