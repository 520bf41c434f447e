import FoundationEssentials
import ODRBase
import Synchronization
import SystemPackage
#if canImport(Glibc)
import Glibc
#endif

/// Where a command writes: stdout and stderr, unbuffered, and what they
/// are (a terminal or not). In `odr`, the process's descriptors
/// (``process()``); in a test, buffers (``captured()``).
package struct Output: Sendable {
  /// One of the two streams.
  package enum Stream: Sendable {
    /// A file descriptor, written to straight away.
    case descriptor(Int32)
    /// A buffer in memory.
    case buffer(Captured)
  }

  /// Bytes written to a ``Stream/buffer(_:)``.
  package final class Captured: Sendable {
    private let bytes = Mutex<[UInt8]>([])
    package init() {}
    /// What was written so far, as text.
    package var text: String { bytes.withLock { String(decoding: $0, as: UTF8.self) } }
    func append(_ buffer: UnsafeRawBufferPointer) { bytes.withLock { $0.append(contentsOf: buffer) } }
  }

  let stdout: Stream
  let stderr: Stream
  /// The errno of the first write to stdout that failed (a full disk, a
  /// closed pipe with SIGPIPE ignored): what a command exists to print was
  /// lost, so it must not exit 0 (``finish()``).
  private let stdoutFailure = StdoutFailure()

  private final class StdoutFailure: Sendable {
    let errno = Mutex<Int32?>(nil)
  }
  /// Set for a loop that repeats a command's work (`odr exec --watch`):
  /// the lines of the last round, said only when new.
  private var repeats: Repeats?

  /// The stderr lines of a repeating loop's rounds.
  package final class Repeats: Sendable {
    private let lines = Mutex<(said: Set<String>, seen: Set<String>)>(([], []))
    package init() {}
    /// Whether `line` is new: not said in the last round, nor in this one.
    func isNew(_ line: String) -> Bool {
      lines.withLock { $0.seen.insert(line); return $0.said.insert(line).inserted }
    }
    /// Ends a round: returns the lines said before that this round did not
    /// repeat (their condition is over), and starts the next round.
    package func endRound() -> [String] {
      lines.withLock { lines in
        let over = lines.said.subtracting(lines.seen).sorted()
        lines = (lines.seen, [])
        return over
      }
    }
  }

  /// This output, saying a stderr line of a repeating loop only when it
  /// is new (`repeats` keeps the rounds).
  package func sayingOnce(_ repeats: Repeats) -> Output {
    var output = self
    output.repeats = repeats
    return output
  }

  /// Whether stdout is a terminal (a person reads it, not a pipe).
  package let stdoutIsTerminal: Bool
  /// Whether stderr is a terminal (progress may be drawn there).
  package let stderrIsTerminal: Bool
  /// The width help is wrapped to; nil: ArgumentParser asks the terminal
  /// (`COLUMNS`, then the window size).
  package let columns: Int?

  package init(stdout: Stream, stderr: Stream, stdoutIsTerminal: Bool = false, stderrIsTerminal: Bool = false, columns: Int? = nil) {
    self.stdout = stdout
    self.stderr = stderr
    self.stdoutIsTerminal = stdoutIsTerminal
    self.stderrIsTerminal = stderrIsTerminal
    self.columns = columns
  }

  /// The process's stdout and stderr.
  package static func process() -> Output {
    Output(stdout: .descriptor(STDOUT_FILENO), stderr: .descriptor(STDERR_FILENO),
           stdoutIsTerminal: isatty(STDOUT_FILENO) == 1, stderrIsTerminal: isatty(STDERR_FILENO) == 1)
  }

  /// Writes `text` to stdout exactly, with no newline added.
  package func write(_ text: String) { Self.write(text, to: stdout, failure: stdoutFailure) }

  /// Throws when a write to stdout failed: the command's output was lost
  /// (exit 1, or 8 when the disk is full), so `odr identity export ci | gh
  /// secret set … && odr identity delete ci` stops before the delete.
  package func finish() throws {
    guard let code = stdoutFailure.errno.withLock({ $0 }) else { return }
    throw SystemError.fromErrno("Could not write the output to standard output, so it is lost; odr changed nothing else. Check where the output goes", code: code)
  }

  /// Writes one line to stderr, prefixed with `odr: `. Messages quote
  /// names that come from catalogs and keyrings, so control characters are
  /// escaped (no terminal escape sequence, no forged line) and a message is
  /// cut to 2,000 characters.
  package func error(_ message: String) {
    let line = Self.oneLine(message)
    guard repeats?.isNew(line) ?? true else { return }
    Self.write("odr: \(line)\n", to: stderr, failure: nil)
  }

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

  /// Writes `text` to stderr as it is (prompts, progress).
  func prompt(_ text: String) { Self.write(text, to: stderr, failure: nil) }

  /// Prints `value` as stable, sorted, pretty JSON on stdout.
  package func json(_ value: some Encodable) throws {
    let encoder = JSONEncoder()
    encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
    encoder.dateEncodingStrategy = .iso8601
    write(String(decoding: try encoder.encode(value), as: UTF8.self) + "\n")
  }

  /// Writes `bytes` to stdout exactly.
  package func write(bytes: some Collection<UInt8>) { Array(bytes).withUnsafeBytes { Self.write($0, to: stdout, failure: stdoutFailure) } }

  private static func write(_ text: String, to stream: Stream, failure: StdoutFailure?) {
    var text = text
    text.withUTF8 { write(UnsafeRawBufferPointer($0), to: stream, failure: failure) }
  }

  /// Writes all of `buffer`; a failure on stdout is kept for ``finish()``
  /// (on stderr nothing more can be said).
  private static func write(_ buffer: UnsafeRawBufferPointer, to stream: Stream, failure: StdoutFailure?) {
    switch stream {
    case .descriptor(let fd):
      do { try FileDescriptor(rawValue: fd).writeAll(buffer) } catch {
        let code = (error as? Errno)?.rawValue ?? EIO
        failure?.errno.withLock { $0 = $0 ?? code }
      }
    case .buffer(let captured):
      captured.append(buffer)
    }
  }
}
