// `odr-floor SERVICE KEY`: the bare floor of a cold `odr get` (benchmark
// (a)): a static Swift program, no Foundation and no odr module, making the
// libsecret calls a lookup needs — secret_service_get_sync (the session
// opened) and secret_service_lookup_sync — and printing the value.
// `odr-floor --version` exits at once: the floor of a process that starts.
import CLibsecretSystem
#if canImport(Glibc)
import Glibc
#endif

let arguments = CommandLine.arguments
if arguments.count == 2, arguments[1] == "--version" {
  _ = write(1, "odr-floor\n", 10)
  exit(0)
}
guard arguments.count == 3 else {
  exit(2)
}
var error: UnsafeMutablePointer<GError>?
guard let service = secret_service_get_sync(SECRET_SERVICE_OPEN_SESSION, nil, &error) else { exit(5) }
let attributes = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, g_free)
g_hash_table_insert(attributes, g_strdup("service"), g_strdup(arguments[1]))
g_hash_table_insert(attributes, g_strdup("key"), g_strdup(arguments[2]))
guard let value = secret_service_lookup_sync(service, nil, attributes, nil, &error) else { exit(3) }
var length: gsize = 0
_ = write(1, secret_value_get(value, &length), Int(length))
