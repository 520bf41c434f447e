internal import CLibsecret
#if canImport(Glibc)
import Glibc
#endif

/// libsecret and GLib, loaded the first time odr touches the desktop
/// keyring (`dlopen` of libsecret-1.so.0, through `odr_libsecret_load`):
/// a command that never does — `begin`, `status`, `verify`, `pack`, the
/// kernel keyring — never maps them, and a machine without libsecret gets
/// a ``KeyringError`` that says so, not a binary that cannot start.
enum LibsecretLibrary {
  /// The loaded table of functions, or why it could not be loaded.
  /// (Written once, here, then only read: safe to share.)
  nonisolated(unsafe) private static let loaded: Result<UnsafeMutablePointer<odr_libsecret>, KeyringError> = {
    // Kept for the life of the process, as the library is.
    let raw = UnsafeMutableRawPointer.allocate(byteCount: MemoryLayout<odr_libsecret>.size, alignment: MemoryLayout<odr_libsecret>.alignment)
    raw.initializeMemory(as: UInt8.self, repeating: 0, count: MemoryLayout<odr_libsecret>.size)
    let table = raw.bindMemory(to: odr_libsecret.self, capacity: 1)
    if let missing = odr_libsecret_load(table) { return .failure(.noLibrary(String(cString: missing))) }
    // When a provider vanishes mid-call, libsecret can trip GIO's own
    // assertions ("g_task_return_boolean: assertion '!task->ever_returned'
    // failed"); odr reports the failure itself, in one line, so GIO's
    // criticals and warnings are not printed over it.
    _ = table.pointee.g_log_set_handler("GLib-GIO", GLogLevelFlags(rawValue: G_LOG_LEVEL_CRITICAL.rawValue | G_LOG_LEVEL_WARNING.rawValue),
                                        { _, _, _, _ in }, nil)
    return .success(table)
  }()

  /// Loads the libraries once; throws ``KeyringError/Code/noLibrary``
  /// when libsecret cannot be loaded. Every path into ``Libsecret`` calls
  /// it before its first call through ``lib``.
  static func load() throws(KeyringError) {
    _ = try loaded.get()
  }

  /// The table; only read after ``load()`` succeeded.
  fileprivate static var table: odr_libsecret {
    guard case .success(let table) = loaded else { preconditionFailure("libsecret called before LibsecretLibrary.load() succeeded") }
    return table.pointee
  }
}

/// libsecret's and GLib's functions, as `lib.secret_service_get_sync(…)`:
/// read only after ``LibsecretLibrary/load()`` succeeded.
let lib = LibsecretLibrary.table
