#ifndef ODR_CKEYCTL_H
#define ODR_CKEYCTL_H

#include <stddef.h>
#include <stdint.h>

// The kernel keyring's system calls (add_key(2), keyctl(2)), which glibc
// does not wrap and Swift cannot call through the variadic syscall(2).
// Each returns what the system call returns; on -1, errno says why.

/// add_key(2): creates or updates the key `type`/`description` in `keyring`.
int32_t odr_add_key(const char *type, const char *description, const void *payload, size_t length, int32_t keyring);

/// keyctl(KEYCTL_SEARCH): the key `type`/`description` reachable from `keyring` (0 when not linking it anywhere).
int32_t odr_keyctl_search(int32_t keyring, const char *type, const char *description);

/// keyctl(KEYCTL_READ): copies up to `length` bytes of `key`'s payload; returns its full length.
long odr_keyctl_read(int32_t key, void *buffer, size_t length);

/// keyctl(KEYCTL_DESCRIBE): "type;uid;gid;perm;description" of `key`, with its full length returned.
long odr_keyctl_describe(int32_t key, char *buffer, size_t length);

/// keyctl(KEYCTL_UNLINK): removes `key` from `keyring`.
long odr_keyctl_unlink(int32_t key, int32_t keyring);

/// keyctl(KEYCTL_LINK): links `key` into `keyring`.
long odr_keyctl_link(int32_t key, int32_t keyring);

/// keyctl(KEYCTL_SET_TIMEOUT): `key` expires `seconds` from now (0: never).
long odr_keyctl_set_timeout(int32_t key, uint32_t seconds);

#endif
