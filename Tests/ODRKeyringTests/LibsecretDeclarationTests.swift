import CBareLookup
import CLibsecret
import Foundation
@testable import ODRKeyring
import ODRTesting
import Testing

/// odr declares the part of libsecret's and GLib's API it calls itself
/// (CLibsecret: loaded with dlopen, built without their headers); each
/// constant and layout it declares is the one the system's headers define.
@Suite(.enabled(if: TestSelection.untagged)) struct LibsecretDeclarationTests {
  static let declared: [(String, Int)] = [
    ("G_BUS_TYPE_SESSION", Int(G_BUS_TYPE_SESSION.rawValue)),
    ("G_DBUS_CALL_FLAGS_NONE", Int(G_DBUS_CALL_FLAGS_NONE.rawValue)),
    ("G_LOG_LEVEL_CRITICAL", Int(G_LOG_LEVEL_CRITICAL.rawValue)),
    ("G_LOG_LEVEL_WARNING", Int(G_LOG_LEVEL_WARNING.rawValue)),
    ("G_IO_ERROR_CANCELLED", Int(G_IO_ERROR_CANCELLED.rawValue)),
    ("G_IO_ERROR_TIMED_OUT", Int(G_IO_ERROR_TIMED_OUT.rawValue)),
    ("G_DBUS_ERROR_SERVICE_UNKNOWN", Int(G_DBUS_ERROR_SERVICE_UNKNOWN.rawValue)),
    ("G_DBUS_ERROR_NAME_HAS_NO_OWNER", Int(G_DBUS_ERROR_NAME_HAS_NO_OWNER.rawValue)),
    ("G_DBUS_ERROR_NO_REPLY", Int(G_DBUS_ERROR_NO_REPLY.rawValue)),
    ("G_DBUS_ERROR_TIMEOUT", Int(G_DBUS_ERROR_TIMEOUT.rawValue)),
    ("G_DBUS_ERROR_TIMED_OUT", Int(G_DBUS_ERROR_TIMED_OUT.rawValue)),
    ("SECRET_ERROR_IS_LOCKED", Int(SECRET_ERROR_IS_LOCKED.rawValue)),
    ("SECRET_ERROR_NO_SUCH_OBJECT", Int(SECRET_ERROR_NO_SUCH_OBJECT.rawValue)),
    ("SECRET_SERVICE_OPEN_SESSION", Int(SECRET_SERVICE_OPEN_SESSION.rawValue)),
    ("SECRET_COLLECTION_NONE", Int(SECRET_COLLECTION_NONE.rawValue)),
    ("SECRET_ITEM_NONE", Int(SECRET_ITEM_NONE.rawValue)),
    ("SECRET_ITEM_CREATE_NONE", Int(SECRET_ITEM_CREATE_NONE.rawValue)),
    ("sizeof:GError", MemoryLayout<GError>.size),
    ("offsetof:GError.domain", MemoryLayout<GError>.offset(of: \.domain)!),
    ("offsetof:GError.code", MemoryLayout<GError>.offset(of: \.code)!),
    ("offsetof:GError.message", MemoryLayout<GError>.offset(of: \.message)!),
    ("sizeof:GQuark", MemoryLayout<GQuark>.size),
    ("sizeof:gboolean", MemoryLayout<gboolean>.size),
    ("sizeof:gsize", MemoryLayout<gsize>.size),
    ("sizeof:gssize", MemoryLayout<gssize>.size),
  ]

  @Test(arguments: declared) func eachDeclarationIsTheSystemHeaders(name: String, value: Int) {
    #expect(odr_libsecret_header_value(name) == value, "\(name)")
  }

  @Test func theLibraryLoadsAndEveryFunctionIsFound() throws {
    try LibsecretLibrary.load()
  }
}
