// The D-Bus path API (secret-paths.h): unchanged since libsecret 0.16.
#define SECRET_API_SUBJECT_TO_CHANGE 1
#include <libsecret/secret.h>
