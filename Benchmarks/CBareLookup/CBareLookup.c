#include "CBareLookup.h"
#include <libsecret/secret.h>
#include <stddef.h>
#include <string.h>

int odr_bench_bare_lookup(const char *service, const char *key) {
  GHashTable *table = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, g_free);
  g_hash_table_insert(table, g_strdup("service"), g_strdup(service));
  g_hash_table_insert(table, g_strdup("key"), g_strdup(key));
  GError *error = NULL;
  gchar *value = secret_password_lookupv_sync(NULL, table, NULL, &error);
  g_hash_table_unref(table);
  g_clear_error(&error);
  int found = value != NULL;
  secret_password_free(value);
  return found;
}

long odr_libsecret_header_value(const char *name) {
  static const struct { const char *name; long value; } values[] = {
#define V(x) { #x, (long)(x) },
    V(G_BUS_TYPE_SESSION) V(G_DBUS_CALL_FLAGS_NONE) V(G_LOG_LEVEL_CRITICAL) V(G_LOG_LEVEL_WARNING)
    V(G_IO_ERROR_CANCELLED) V(G_IO_ERROR_TIMED_OUT) V(G_DBUS_ERROR_SERVICE_UNKNOWN) V(G_DBUS_ERROR_NAME_HAS_NO_OWNER)
    V(G_DBUS_ERROR_NO_REPLY) V(G_DBUS_ERROR_TIMEOUT) V(G_DBUS_ERROR_TIMED_OUT) V(SECRET_ERROR_IS_LOCKED)
    V(SECRET_ERROR_NO_SUCH_OBJECT) V(SECRET_SERVICE_OPEN_SESSION) V(SECRET_COLLECTION_NONE) V(SECRET_ITEM_NONE)
    V(SECRET_ITEM_CREATE_NONE)
#undef V
    { "sizeof:GError", (long)sizeof(GError) }, { "offsetof:GError.domain", (long)offsetof(GError, domain) },
    { "offsetof:GError.code", (long)offsetof(GError, code) }, { "offsetof:GError.message", (long)offsetof(GError, message) },
    { "sizeof:GQuark", (long)sizeof(GQuark) }, { "sizeof:gboolean", (long)sizeof(gboolean) },
    { "sizeof:gsize", (long)sizeof(gsize) }, { "sizeof:gssize", (long)sizeof(gssize) },
  };
  for (size_t i = 0; i < sizeof values / sizeof values[0]; i++)
    if (strcmp(values[i].name, name) == 0) return values[i].value;
  return -1;
}
