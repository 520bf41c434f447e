#if canImport(Glibc)
import Glibc
#endif
import FoundationEssentials
import ODRBase

/// The process at the other end of a loopback connection to the proxy, for
/// the audit line: `comm` and `exe` of the process, within the child's
/// process tree, that holds the client socket (found through
/// the child's `/proc/PID/net/tcp{,6}` and the tree's `/proc/PID/fd`).
enum ConnectingProcess {
  /// "comm (exe)" of the process whose socket has local port `port`,
  /// searched among `root` and its descendants; nil when none is found.
  static func describe(clientPort port: Int, root: pid_t) -> String? {
    guard root > 0, let inode = socketInode(localPort: port, namespaceOf: root) else { return nil }
    let target = "socket:[\(inode)]"
    for pid in tree(root) {
      let folder = "/proc/\(pid)/fd"
      guard let entries = dropping(.isTheAnswer, { try FileManager.default.contentsOfDirectory(atPath: folder) }) else { continue }
      for entry in entries where link("\(folder)/\(entry)") == target {
        let comm = text("/proc/\(pid)/comm")?
          .filter { $0 != "\n" } ?? "?"
        return "\(comm) (\(link("/proc/\(pid)/exe") ?? "?"), pid \(pid))"
      }
    }
    return nil
  }

  /// The inode of the TCP socket whose local port is `port`, in the
  /// network namespace of process `pid` (the sandbox's own, for a
  /// sandboxed command).
  static func socketInode(localPort port: Int, namespaceOf pid: pid_t) -> String? {
    let digits = String(port, radix: 16, uppercase: true)
    let hex = String(repeating: "0", count: max(0, 4 - digits.count)) + digits
    for table in ["/proc/\(pid)/net/tcp", "/proc/\(pid)/net/tcp6"] {
      guard let text = text(table) else { continue }
      for line in text.split(separator: "\n").dropFirst() {
        let fields = line.split(separator: " ")
        guard fields.count > 9, fields[1].hasSuffix(":" + hex) else { continue }
        return String(fields[9])
      }
    }
    return nil
  }

  /// `root` and every process below it (from each process's parent in /proc/PID/stat).
  static func tree(_ root: pid_t) -> [pid_t] {
    var children: [pid_t: [pid_t]] = [:]
    let entries = dropping(.isTheAnswer) { try FileManager.default.contentsOfDirectory(atPath: "/proc") } ?? []
    for entry in entries {
      guard let pid = pid_t(entry),
            let stat = text("/proc/\(pid)/stat"),
            let close = stat.lastIndex(of: ")") else { continue }
      let fields = stat[stat.index(after: close)...].split(separator: " ")
      guard fields.count > 1, let parent = pid_t(fields[1]) else { continue }
      children[parent, default: []].append(pid)
    }
    var result: [pid_t] = []
    var queue = [root]
    while let pid = queue.popLast() {
      result.append(pid)
      queue.append(contentsOf: children[pid] ?? [])
    }
    return result
  }

  /// A /proc file whole. Read to its end by hand: /proc reports a size of
  /// 0 and serves a page per read, so a reader that trusts the size or
  /// reads once sees only the start of /proc/net/tcp on a busy machine.
  static func text(_ path: String) -> String? {
    let fd = open(path, O_RDONLY | O_CLOEXEC)
    guard fd >= 0 else { return nil }
    defer { close(fd) }
    var bytes: [UInt8] = []
    var buffer = [UInt8](repeating: 0, count: 65536)
    while true {
      let count = buffer.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
      if count < 0 && errno == EINTR { continue }
      guard count > 0 else { return count == 0 ? String(decoding: bytes, as: UTF8.self) : nil }
      bytes.append(contentsOf: buffer[..<count])
    }
  }

  private static func link(_ path: String) -> String? {
    var buffer = [CChar](repeating: 0, count: 4096)
    let count = readlink(path, &buffer, buffer.count - 1)
    guard count > 0 else { return nil }
    return String(decoding: buffer[..<count].map(UInt8.init(bitPattern:)), as: UTF8.self)
  }
}
