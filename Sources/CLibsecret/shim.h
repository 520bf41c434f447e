// The D-Bus path API (secret-paths.h) lets odr search without building a
// proxy per item; it has been unchanged since libsecret 0.16.
#define SECRET_API_SUBJECT_TO_CHANGE 1
#include <libsecret/secret.h>
