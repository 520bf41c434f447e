#if canImport(Glibc)
import Glibc
#endif

/// A failed system call in odr's shared plumbing (a lock, a state folder):
/// what was being done, in plain words, and the `errno` behind it.
public struct SystemError: Error, Sendable, CustomStringConvertible {
  /// The disk is full or the quota is used up (exit 8, like a full store).
  public var isOutOfSpace: Bool { errno == ENOSPC || errno == EDQUOT }
  /// What happened and what to do.
  public let message: String
  /// The `errno` of the failed call.
  public let errno: Int32

  public init(_ message: String, errno: Int32) {
    self.message = message
    self.errno = errno
  }

  /// The error of the call that just failed (`code`: its `errno`, read
  /// right after it): `what`, then why, with advice for the common cases.
  public static func fromErrno(_ what: String) -> SystemError {
    fromErrno(what, code: Glibc.errno)
  }

  /// The error of a call that failed with `code`.
  public static func fromErrno(_ what: String, code: Int32) -> SystemError {
    let reason = String(cString: strerror(code))
    let advice = switch code {
    case ENOSPC, EDQUOT: " Free some space and try again."
    case EACCES, EPERM: " Check the folder's owner and mode."
    default: ""
    }
    return SystemError("\(what): \(reason).\(advice)", errno: code)
  }

  public var description: String { message }
}

extension SystemError: ODRError {
  public var domain: String { "system" }
  /// `out-of-space`, else the errno's name as a number (`errno-13`).
  public var kind: String { isOutOfSpace ? "out-of-space" : "errno-\(errno)" }
  public var isTransient: Bool { errno == EINTR || errno == EAGAIN || errno == ETIMEDOUT }
}
