import FoundationEssentials
#if canImport(Glibc)
import Glibc
#endif

/// A running process, named so that a recycled pid is not mistaken for it:
/// its pid and its start time (clock ticks after boot, field 22 of
/// `/proc/PID/stat`). Holders of pins and of imports are recorded this way.
public struct ProcessIdentity: Codable, Sendable, Equatable {
  public let pid: Int32
  public let start: UInt64

  /// The process `pid`, or nil when there is no such running process.
  public init?(pid: Int32) {
    guard let start = Self.startTime(of: pid) else { return nil }
    self.pid = pid
    self.start = start
  }

  /// The process `pid` that started at `start` (clock ticks after boot).
  public init(pid: Int32, start: UInt64) {
    self.pid = pid
    self.start = start
  }

  /// This process.
  public static var current: ProcessIdentity { ProcessIdentity(pid: getpid())! }

  /// True while the process runs (a zombie has exited: it is not live).
  /// When its /proc entry cannot be read for another reason (too many open
  /// files, say), it counts as live: a live importer or pin holder must
  /// never be taken for dead.
  public var isLive: Bool {
    if let current = Self.startTime(of: pid) { return current == start }
    guard kill(pid, 0) == 0 || errno == EPERM else { return false }  // no such process
    return FileManager.default.fileExists(atPath: "/proc/\(pid)") ? !Self.isZombie(pid) : true
  }

  /// True when /proc says `pid` has exited and awaits its parent.
  static func isZombie(_ pid: Int32) -> Bool {
    guard let data = FileManager.default.contents(atPath: "/proc/\(pid)/stat"), let close = data.lastIndex(of: UInt8(ascii: ")")),
          close + 2 < data.count else { return false }
    return data[close + 2] == UInt8(ascii: "Z")
  }

  /// Field 22 of /proc/PID/stat, or nil when there is no such process. The
  /// command name in field 2 may be any bytes (even not UTF-8), so the
  /// fields are read after its closing parenthesis.
  public static func startTime(of pid: Int32) -> UInt64? {
    guard pid > 0, let data = FileManager.default.contents(atPath: "/proc/\(pid)/stat"),
          let close = data.lastIndex(of: UInt8(ascii: ")")) else { return nil }
    let fields = String(decoding: data[(close + 1)...], as: UTF8.self).split(separator: " ")
    guard fields.count > 19, let start = UInt64(fields[19]) else { return nil }
    return fields[0] == "Z" ? nil : start
  }
}
