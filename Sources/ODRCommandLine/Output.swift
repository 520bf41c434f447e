import FoundationEssentials
import SystemPackage
#if canImport(Glibc)
import Glibc
#endif

/// Writing to stdout and stderr, unbuffered, straight to the descriptors.
package enum Output {
  package static var stdoutIsTerminal: Bool { isatty(STDOUT_FILENO) == 1 }

  /// Writes `text` to stdout exactly, with no newline added.
  package static func write(_ text: String) { write(text, to: STDOUT_FILENO) }

  /// Writes one line to stderr, prefixed with `odr: `. Messages quote
  /// names that come from catalogs and keyrings, so control characters are
  /// escaped (no terminal escape sequence, no forged line) and a message is
  /// cut to 2,000 characters.
  package static func error(_ message: String) { write("odr: \(oneLine(message))\n", to: STDERR_FILENO) }

  /// `text` with control and bidirectional-override characters escaped and
  /// the middle of an over-long text elided.
  static func oneLine(_ text: String, limit: Int = 2_000) -> String {
    var scalars = Array(text.unicodeScalars)
    if scalars.count > limit {
      scalars = Array(scalars.prefix(limit / 2)) + ["…"] + Array(scalars.suffix(limit / 2))
    }
    return scalars.map { scalar -> String in
      let value = scalar.value
      let isControl = value < 0x20 || (0x7f...0x9f).contains(value) || (0x202a...0x202e).contains(value) || (0x2066...0x2069).contains(value)
      return isControl ? scalar.escaped(asASCII: true) : String(scalar)
    }.joined()
  }

  /// Writes `text` to stderr as it is (prompts).
  static func prompt(_ text: String) { write(text, to: STDERR_FILENO) }

  /// Prints `value` as stable, sorted, pretty JSON on stdout.
  package static func json(_ value: some Encodable) throws {
    let encoder = JSONEncoder()
    encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
    encoder.dateEncodingStrategy = .iso8601
    write(String(decoding: try encoder.encode(value), as: UTF8.self) + "\n")
  }

  /// Writes `bytes` to stdout exactly.
  package static func write(bytes: some Collection<UInt8>) { write(Array(bytes), to: STDOUT_FILENO) }

  private static func write(_ text: String, to fd: Int32) {
    var text = text
    text.withUTF8 { write(UnsafeRawBufferPointer($0), to: fd) }
  }

  private static func write(_ bytes: [UInt8], to fd: Int32) {
    bytes.withUnsafeBytes { write($0, to: fd) }
  }

  private static func write(_ buffer: UnsafeRawBufferPointer, to fd: Int32) {
    // A closed pipe: nothing more can be said.
    _ = try? FileDescriptor(rawValue: fd).writeAll(buffer)
  }
}
