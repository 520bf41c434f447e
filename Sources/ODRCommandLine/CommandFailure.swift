/// A failure of a command implemented outside this module: its message and
/// exit code (docs/design.md, "Exit codes").
package struct CommandFailure: Error {
  package let message: String
  package let code: Int32

  package init(_ message: String, code: Int32) {
    self.message = message
    self.code = code
  }
}
