#ifndef ODR_CLIBSECRET_SHIM_H
#define ODR_CLIBSECRET_SHIM_H
// libsecret and GLib, as odr calls them: loaded (dlopen) the first time a
// command touches the desktop keyring, not linked. A command that never
// does — `begin`, `status`, `verify`, `pack`, `--store kernel` — never maps
// libsecret, GLib or libgcrypt, and a machine without them gets an error
// that says so, not a binary that cannot start.
//
// The declarations below are the subset of libsecret 0.20's and GLib 2.x's
// public API (stable ABI since GLib 2.0 and libsecret 0.16, D-Bus path API
// included) that odr uses, written out so that building odr needs neither
// their headers' include paths nor their link flags. Types odr only passes
// pointers to are declared without their fields. Tests/ODRKeyringTests/
// LibsecretDeclarationTests checks every constant against the real headers.

#include <dlfcn.h>
#include <stddef.h>
#include <stdint.h>

// Pointers without a nullability annotation are imported as GLib's own
// headers are (implicitly unwrapped); only the table's fields say _Nonnull.
#pragma clang diagnostic push
#pragma clang diagnostic ignored "-Wnullability-completeness"

typedef char gchar;
typedef int gint;
typedef unsigned int guint;
typedef int gboolean;
typedef uint32_t guint32;
typedef uint64_t guint64;
typedef size_t gsize;
typedef ptrdiff_t gssize;
typedef void *gpointer;
typedef const void *gconstpointer;
typedef guint32 GQuark;

typedef struct _GError { GQuark domain; gint code; gchar *message; } GError;

// Instances odr holds pointers to and never reads.
typedef struct _GObject { unsigned char opaque; } GObject;
typedef struct _GCancellable { unsigned char opaque; } GCancellable;
typedef struct _GDBusProxy { unsigned char opaque; } GDBusProxy;
typedef struct _SecretService { unsigned char opaque; } SecretService;
typedef struct _SecretItem { unsigned char opaque; } SecretItem;
typedef struct _SecretCollection { unsigned char opaque; } SecretCollection;
typedef struct _GDBusConnection GDBusConnection;
typedef struct _GVariant GVariant;
typedef struct _GVariantType GVariantType;
typedef struct _GHashTable GHashTable;
typedef struct _GMainContext GMainContext;
typedef struct _GAsyncResult GAsyncResult;
typedef struct _SecretValue SecretValue;
typedef struct _SecretSchema SecretSchema;

typedef enum { G_BUS_TYPE_SESSION = 2 } GBusType;
typedef enum { G_DBUS_CALL_FLAGS_NONE = 0 } GDBusCallFlags;
typedef enum { G_LOG_LEVEL_CRITICAL = 1 << 3, G_LOG_LEVEL_WARNING = 1 << 4 } GLogLevelFlags;
typedef enum { G_IO_ERROR_CANCELLED = 19, G_IO_ERROR_TIMED_OUT = 24 } GIOErrorEnum;
typedef enum {
  G_DBUS_ERROR_SERVICE_UNKNOWN = 2, G_DBUS_ERROR_NAME_HAS_NO_OWNER = 3, G_DBUS_ERROR_NO_REPLY = 4,
  G_DBUS_ERROR_TIMEOUT = 12, G_DBUS_ERROR_TIMED_OUT = 20
} GDBusError;
typedef enum { SECRET_ERROR_IS_LOCKED = 2, SECRET_ERROR_NO_SUCH_OBJECT = 3 } SecretError;
typedef enum { SECRET_SERVICE_OPEN_SESSION = 1 << 1 } SecretServiceFlags;
typedef enum { SECRET_COLLECTION_NONE = 0 } SecretCollectionFlags;
typedef enum { SECRET_ITEM_NONE = 0 } SecretItemFlags;
typedef enum { SECRET_ITEM_CREATE_NONE = 0 } SecretItemCreateFlags;

typedef void (*GAsyncReadyCallback)(GObject *source_object, GAsyncResult *res, gpointer user_data);
typedef void (*GLogFunc)(const gchar *log_domain, GLogLevelFlags log_level, const gchar *message, gpointer user_data);
typedef guint (*GHashFunc)(gconstpointer key);
typedef gboolean (*GEqualFunc)(gconstpointer a, gconstpointer b);
typedef void (*GDestroyNotify)(gpointer data);

// Each function's type, as its header declares it. The table below holds
// one pointer of each type; odr never calls these names directly.
#define ODR_LIBSECRET_FUNCTIONS(X) \
  X(GDBusConnection *, g_bus_get_sync, (GBusType bus_type, GCancellable *cancellable, GError **error)) \
  X(void, g_cancellable_cancel, (GCancellable *cancellable)) \
  X(GCancellable *, g_cancellable_new, (void)) \
  X(void, g_clear_error, (GError **err)) \
  X(void, g_dbus_connection_call, (GDBusConnection *connection, const gchar *bus_name, const gchar *object_path, \
    const gchar *interface_name, const gchar *method_name, GVariant *parameters, const GVariantType *reply_type, \
    GDBusCallFlags flags, gint timeout_msec, GCancellable *cancellable, GAsyncReadyCallback callback, gpointer user_data)) \
  X(GVariant *, g_dbus_connection_call_finish, (GDBusConnection *connection, GAsyncResult *res, GError **error)) \
  X(GVariant *, g_dbus_connection_call_sync, (GDBusConnection *connection, const gchar *bus_name, const gchar *object_path, \
    const gchar *interface_name, const gchar *method_name, GVariant *parameters, const GVariantType *reply_type, \
    GDBusCallFlags flags, gint timeout_msec, GCancellable *cancellable, GError **error)) \
  X(gchar *, g_dbus_error_get_remote_error, (const GError *error)) \
  X(GQuark, g_dbus_error_quark, (void)) \
  X(GDBusConnection *, g_dbus_proxy_get_connection, (GDBusProxy *proxy)) \
  X(const gchar *, g_dbus_proxy_get_name, (GDBusProxy *proxy)) \
  X(const gchar *, g_dbus_proxy_get_object_path, (GDBusProxy *proxy)) \
  X(void, g_error_free, (GError *error)) \
  X(void, g_free, (gpointer mem)) \
  X(gboolean, g_hash_table_insert, (GHashTable *hash_table, gpointer key, gpointer value)) \
  X(gpointer, g_hash_table_lookup, (GHashTable *hash_table, gconstpointer key)) \
  X(GHashTable *, g_hash_table_new_full, (GHashFunc hash_func, GEqualFunc key_equal_func, GDestroyNotify key_destroy_func, \
    GDestroyNotify value_destroy_func)) \
  X(void, g_hash_table_unref, (GHashTable *hash_table)) \
  X(GQuark, g_io_error_quark, (void)) \
  X(guint, g_log_set_handler, (const gchar *log_domain, GLogLevelFlags log_levels, GLogFunc log_func, gpointer user_data)) \
  X(gboolean, g_main_context_iteration, (GMainContext *context, gboolean may_block)) \
  X(GMainContext *, g_main_context_new, (void)) \
  X(void, g_main_context_pop_thread_default, (GMainContext *context)) \
  X(void, g_main_context_push_thread_default, (GMainContext *context)) \
  X(void, g_main_context_unref, (GMainContext *context)) \
  X(void, g_object_unref, (gpointer object)) \
  X(const gchar *, g_quark_to_string, (GQuark quark)) \
  X(gboolean, g_str_equal, (gconstpointer v1, gconstpointer v2)) \
  X(guint, g_str_hash, (gconstpointer v)) \
  X(gchar *, g_strdup, (const gchar *str)) \
  X(void, g_strfreev, (gchar **str_array)) \
  X(gboolean, g_variant_get_boolean, (GVariant *value)) \
  X(GVariant *, g_variant_get_child_value, (GVariant *value, gsize index_)) \
  X(const gchar *, g_variant_get_string, (GVariant *value, gsize *length)) \
  X(const gchar *, g_variant_get_type_string, (GVariant *value)) \
  X(guint32, g_variant_get_uint32, (GVariant *value)) \
  X(guint64, g_variant_get_uint64, (GVariant *value)) \
  X(GVariant *, g_variant_get_variant, (GVariant *value)) \
  X(gsize, g_variant_n_children, (GVariant *value)) \
  X(GVariant *, g_variant_new_array, (const GVariantType *child_type, GVariant *const *children, gsize n_children)) \
  X(GVariant *, g_variant_new_dict_entry, (GVariant *key, GVariant *value)) \
  X(GVariant *, g_variant_new_string, (const gchar *string)) \
  X(GVariant *, g_variant_new_tuple, (GVariant *const *children, gsize n_children)) \
  X(void, g_variant_type_free, (GVariantType *type)) \
  X(GVariantType *, g_variant_type_new, (const gchar *type_string)) \
  X(void, g_variant_unref, (GVariant *value)) \
  X(SecretCollection *, secret_collection_for_alias_sync, (SecretService *service, const gchar *alias, \
    SecretCollectionFlags flags, GCancellable *cancellable, GError **error)) \
  X(gchar *, secret_collection_get_label, (SecretCollection *self)) \
  X(gboolean, secret_collection_get_locked, (SecretCollection *self)) \
  X(GQuark, secret_error_get_quark, (void)) \
  X(SecretItem *, secret_item_create_sync, (SecretCollection *collection, const SecretSchema *schema, GHashTable *attributes, \
    const gchar *label, SecretValue *value, SecretItemCreateFlags flags, GCancellable *cancellable, GError **error)) \
  X(gboolean, secret_item_delete_sync, (SecretItem *self, GCancellable *cancellable, GError **error)) \
  X(SecretItem *, secret_item_new_for_dbus_path_sync, (SecretService *service, const gchar *item_path, SecretItemFlags flags, \
    GCancellable *cancellable, GError **error)) \
  X(gboolean, secret_item_set_secret_sync, (SecretItem *self, SecretValue *value, GCancellable *cancellable, GError **error)) \
  X(GHashTable *, secret_service_get_secrets_for_dbus_paths_sync, (SecretService *self, const gchar **item_paths, \
    GCancellable *cancellable, GError **error)) \
  X(SecretService *, secret_service_get_sync, (SecretServiceFlags flags, GCancellable *cancellable, GError **error)) \
  X(gboolean, secret_service_search_for_dbus_paths_sync, (SecretService *self, const SecretSchema *schema, \
    GHashTable *attributes, GCancellable *cancellable, gchar ***unlocked, gchar ***locked, GError **error)) \
  X(gint, secret_service_unlock_dbus_paths_sync, (SecretService *self, const gchar **paths, GCancellable *cancellable, \
    gchar ***unlocked, GError **error)) \
  X(const gchar *, secret_value_get, (SecretValue *value, gsize *length)) \
  X(SecretValue *, secret_value_new, (const gchar *secret, gssize length, const gchar *content_type)) \
  X(void, secret_value_unref, (gpointer value))

/// The functions odr calls, one typed pointer each.
typedef struct {
#define ODR_FIELD(result, name, parameters) result (*_Nonnull name) parameters;
  ODR_LIBSECRET_FUNCTIONS(ODR_FIELD)
#undef ODR_FIELD
} odr_libsecret;

/// Loads libsecret-1.so.0 and fills `table` (dlsym on libsecret's handle
/// also finds GLib's functions, its dependencies). Returns NULL on
/// success, else dlerror()'s text: the library or the function missing.
static inline const char *_Nullable odr_libsecret_load(odr_libsecret *_Nonnull table) {
  void *library = dlopen("libsecret-1.so.0", RTLD_NOW | RTLD_LOCAL);
  if (library == NULL) return dlerror();
#define ODR_LOAD(result, name, parameters) \
  if ((*(void **)&table->name = dlsym(library, #name)) == NULL) return dlerror();
  ODR_LIBSECRET_FUNCTIONS(ODR_LOAD)
#undef ODR_LOAD
  return NULL;
}

#pragma clang diagnostic pop
#endif
