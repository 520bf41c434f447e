import ODRKeyring
import SystemPackage
#if canImport(Glibc)
import Glibc
#endif

/// Reads a secret value from standard input, never from argv.
///
/// On a terminal it prompts with echo off and reads one line. Otherwise it
/// reads everything up to end of file and drops one trailing newline (so
/// `echo "$KEY" | odr set NAME` stores the key alone) unless `keepNewline`.
enum SecretInput {
  static func read(prompt: String, keepNewline: Bool, _ context: CommandContext) throws -> String {
    let input = context.input
    let bytes = isatty(input.rawValue) == 1 ? readLineWithoutEcho(prompt: prompt, input: input, output: context.output)
      : try StandardInput.readAll(input, limit: KeyringInput.maxValueBytes + 2, what: "the value")
    var value = bytes[...]
    if !keepNewline, value.last == UInt8(ascii: "\n") {
      value = value.dropLast()
      if value.last == UInt8(ascii: "\r") { value = value.dropLast() }
    }
    guard let text = String(validating: value, as: UTF8.self) else {
      throw KeyringError(.invalidInput, "The value on standard input is not UTF-8 text.")
    }
    return text
  }

  private static func readLineWithoutEcho(prompt: String, input: FileDescriptor, output: Output) -> [UInt8] {
    output.prompt(prompt)
    var saved = termios()
    let hasTerminal = tcgetattr(input.rawValue, &saved) == 0
    if hasTerminal {
      var quiet = saved
      quiet.c_lflag &= ~tcflag_t(ECHO)
      tcsetattr(input.rawValue, TCSAFLUSH, &quiet)
    }
    defer {
      if hasTerminal { tcsetattr(input.rawValue, TCSAFLUSH, &saved) }
      output.prompt("\n")
    }
    var result: [UInt8] = []
    var byte: UInt8 = 0
    while Glibc.read(input.rawValue, &byte, 1) == 1, byte != UInt8(ascii: "\n") {
      result.append(byte)
    }
    return result
  }
}
