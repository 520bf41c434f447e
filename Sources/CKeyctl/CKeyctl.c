#include "CKeyctl.h"

#include <sys/syscall.h>
#include <unistd.h>

enum {
  KEYCTL_DESCRIBE = 6,
  KEYCTL_LINK = 8,
  KEYCTL_UNLINK = 9,
  KEYCTL_SEARCH = 10,
  KEYCTL_READ = 11,
  KEYCTL_SET_TIMEOUT = 15,
};

int32_t odr_add_key(const char *type, const char *description, const void *payload, size_t length, int32_t keyring) {
  return (int32_t)syscall(SYS_add_key, type, description, payload, length, keyring);
}

int32_t odr_keyctl_search(int32_t keyring, const char *type, const char *description) {
  return (int32_t)syscall(SYS_keyctl, KEYCTL_SEARCH, keyring, type, description, 0);
}

long odr_keyctl_read(int32_t key, void *buffer, size_t length) {
  return syscall(SYS_keyctl, KEYCTL_READ, key, buffer, length);
}

long odr_keyctl_describe(int32_t key, char *buffer, size_t length) {
  return syscall(SYS_keyctl, KEYCTL_DESCRIBE, key, buffer, length);
}

long odr_keyctl_link(int32_t key, int32_t keyring) {
  return syscall(SYS_keyctl, KEYCTL_LINK, key, keyring);
}

long odr_keyctl_unlink(int32_t key, int32_t keyring) {
  return syscall(SYS_keyctl, KEYCTL_UNLINK, key, keyring);
}

long odr_keyctl_set_timeout(int32_t key, uint32_t seconds) {
  return syscall(SYS_keyctl, KEYCTL_SET_TIMEOUT, key, seconds);
}
