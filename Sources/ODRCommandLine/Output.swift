import FoundationEssentials
#if canImport(Glibc)
import Glibc
#endif

/// Writing to stdout and stderr, unbuffered, straight to the descriptors.
enum Output {
  static var stdoutIsTerminal: Bool { isatty(STDOUT_FILENO) == 1 }

  /// Writes `text` to stdout exactly, with no newline added.
  static func write(_ text: String) { write(text, to: STDOUT_FILENO) }

  /// Writes one line to stderr, prefixed with `odr: `.
  static func error(_ message: String) { write("odr: \(message)\n", to: STDERR_FILENO) }

  /// Writes `text` to stderr as it is (prompts).
  static func prompt(_ text: String) { write(text, to: STDERR_FILENO) }

  /// Prints `value` as stable, sorted, pretty JSON on stdout.
  static func json(_ value: some Encodable) throws {
    let encoder = JSONEncoder()
    encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
    write(String(decoding: try encoder.encode(value), as: UTF8.self) + "\n")
  }

  private static func write(_ text: String, to fd: Int32) {
    var text = text
    text.withUTF8 { buffer in
      var offset = 0
      while offset < buffer.count {
        let n = Glibc.write(fd, buffer.baseAddress! + offset, buffer.count - offset)
        if n < 0 && errno == EINTR { continue }
        if n <= 0 { return }  // a closed pipe: nothing more can be said
        offset += n
      }
    }
  }
}
