#if canImport(Glibc)
import Glibc
#endif

/// Names the process behind a bus name, from `/proc`: what `odr doctor`
/// shows as the Secret Service provider.
enum ProviderProcess {
  /// The executable's file name (`gnome-keyring-daemon`, `keepassxc`), or
  /// for an interpreter (`python3`, `perl`, …) the script it runs; nil
  /// when `/proc` does not tell (another user's process, a sandbox).
  static func name(pid: UInt32) -> String? {
    let arguments = commandLine(pid: pid)
    let executable = link("/proc/\(pid)/exe") ?? arguments.first
    guard let program = executable.map(baseName), !program.isEmpty else { return nil }
    let interpreters = ["python", "perl", "ruby", "node", "sh", "bash"]
    // A script path, not inline code (`python3 -c '…'`), is named.
    if interpreters.contains(where: { program.hasPrefix($0) }),
       let script = arguments.dropFirst().first(where: { !$0.hasPrefix("-") }),
       !script.contains(where: \.isWhitespace) {
      return baseName(script)
    }
    return program
  }

  private static func baseName(_ path: String) -> String {
    String(path.split(separator: "/").last ?? Substring(path))
  }

  private static func link(_ path: String) -> String? {
    var buffer = [CChar](repeating: 0, count: 4096)
    let count = readlink(path, &buffer, buffer.count - 1)
    guard count > 0 else { return nil }
    return String(decoding: buffer[..<count].map { UInt8(bitPattern: $0) }, as: UTF8.self)
  }

  /// The NUL-separated arguments of `/proc/PID/cmdline`.
  private static func commandLine(pid: UInt32) -> [String] {
    let fd = open("/proc/\(pid)/cmdline", O_RDONLY | O_CLOEXEC)
    guard fd >= 0 else { return [] }
    defer { close(fd) }
    var bytes: [UInt8] = []
    var buffer = [UInt8](repeating: 0, count: 4096)
    while bytes.count < 65536 {
      let count = read(fd, &buffer, buffer.count)
      guard count > 0 else { break }
      bytes += buffer[..<count]
    }
    return bytes.split(separator: 0).map { String(decoding: $0, as: UTF8.self) }
  }
}
