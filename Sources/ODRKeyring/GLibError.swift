import CLibsecret

/// An error GLib reported (GIO, D-Bus, libsecret): the cause a
/// ``KeyringError`` keeps, typed, with its domain and code for whoever
/// needs more than the message.
public struct GLibError: Error, Sendable, CustomStringConvertible {
  /// The error domain, such as `g-dbus-error-quark` or `secret-error`.
  public let domain: String
  /// The code within the domain.
  public let code: Int32
  /// GLib's message.
  public let message: String

  init(_ error: GError) {
    domain = lib.g_quark_to_string(error.domain).map { String(cString: $0) } ?? ""
    code = error.code
    message = error.message.map { String(cString: $0) } ?? ""
  }

  public var description: String { message }
}

