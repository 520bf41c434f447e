import Glibc
import NIOCore
import NIOPosix
import NIOSSL

/// What a failed request means, told from the error's type and errno,
/// never from its text: HTTP1Client's own errors, SwiftNIO's
/// connection, DNS and socket errors, and NIOSSL's TLS errors.
enum TransportFailure: Equatable {
  /// The host name does not resolve.
  case unknownHost(String)
  case refused
  case reset
  /// The server closed the connection before the response ended.
  case closed
  case tls
  case connectTimeout
  /// No byte for longer than the stall timeout.
  case stalled
  /// Anything else (the error is shown as it is).
  case other

  init(_ error: any Error) {
    switch error {
    case let error as HTTP1Client.Failure:
      switch error {
      case .connectTimeout: self = .connectTimeout
      case .stalled: self = .stalled
      case .closedEarly: self = .closed
      case .tlsHandshakeTimeout, .closedDuringHandshake: self = .tls
      case .cancelled: self = .other
      }
    case let error as NIOConnectionError:
      if let dns = error.dnsAError ?? error.dnsAAAAError {
        self = dns is SocketAddressError.UnknownHost ? .unknownHost(error.host) : .other
      } else if let first = error.connectionErrors.first {
        self = TransportFailure(first.error)
      } else {
        self = .other
      }
    case let error as SocketAddressError.UnknownHost: self = .unknownHost(error.host)
    case let error as IOError:
      switch error.errnoCode {
      case ECONNREFUSED: self = .refused
      case ECONNRESET, EPIPE: self = .reset
      default: self = .other
      }
    case is NIOSSLError, is BoringSSLError, is NIOSSLExtraError: self = .tls
    default: self = .other
    }
  }
}
