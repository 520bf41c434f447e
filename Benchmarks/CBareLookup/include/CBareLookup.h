#ifndef ODR_CBARELOOKUP_H
#define ODR_CBARELOOKUP_H

/// The system's libsecret, from a header that names no GLib type (so that
/// Swift code can import it beside odr's CLibsecret).
///
/// One bare libsecret lookup (secret_password_lookupv_sync of `service` and
/// `key`, no schema), linked against the system's libsecret: the peer the
/// benchmark measures odr's keyring reads against. Returns 1 when found.
/// Its header names no GLib type, so odr-bench imports it beside odr's own
/// declarations of libsecret (CLibsecret) without the two meeting.
int odr_bench_bare_lookup(const char *service, const char *key);

/// The value of libsecret's or GLib's constant `name` as the system's
/// headers define it (sizes as `sizeof:TYPE`, offsets as
/// `offsetof:TYPE.FIELD`), or -1 when it is not one this knows: what
/// ODRKeyringTests checks odr's own declarations (CLibsecret) against.
long odr_libsecret_header_value(const char *name);

#endif
