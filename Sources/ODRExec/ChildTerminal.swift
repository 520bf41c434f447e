import CHardening
#if canImport(Glibc)
import Glibc
#endif

/// The terminal a masked command gets in place of odr's: a pseudo-terminal
/// that is the controlling terminal of the command's own session, so that
/// what the command writes to `/dev/tty` (a pager, an editor, a prompt, an
/// agent's front end) passes through odr's masker like its stdout.
///
/// odr relays the user's terminal to it: while odr is in the foreground the
/// user's terminal is in raw mode and every key goes to the command's
/// terminal, whose line discipline (the user's settings, copied) turns
/// Ctrl-C into SIGINT and Ctrl-Z into SIGTSTP for the command; its size
/// follows the user's (SIGWINCH). The user's settings are put back on every
/// way odr ends but SIGKILL.
struct ChildTerminal {
  /// odr's controlling terminal (`/dev/tty`), opened for the relay.
  let user: Int32
  /// The pseudo-terminal's master (odr's end) and its slave's path.
  let master: Int32
  let slavePath: String
  /// The user's settings before raw mode.
  private let saved: termios

  /// A pseudo-terminal like odr's controlling terminal; nil when odr has
  /// none (CI, a service) or none can be made.
  static func make() -> ChildTerminal? {
    let user = open("/dev/tty", O_RDWR | O_NOCTTY | O_CLOEXEC)
    guard user >= 0 else { return nil }
    var settings = termios(), master: Int32 = -1, slave: Int32 = -1
    var name = [CChar](repeating: 0, count: 128)
    guard tcgetattr(user, &settings) == 0, odr_open_pseudo_terminal(&master, &slave) == 0 else {
      Glibc.close(user)
      return nil
    }
    defer { Glibc.close(slave) }  // the command opens it by name, which makes it its controlling terminal
    guard odr_pseudo_terminal_name(master, &name, UInt(name.count)) == 0 else {
      Glibc.close(master)
      Glibc.close(user)
      return nil
    }
    _ = tcsetattr(slave, TCSANOW, &settings)
    let path = String(decoding: name.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    let terminal = ChildTerminal(user: user, master: master, slavePath: path, saved: settings)
    terminal.copyWindowSize()
    return terminal
  }

  /// True while odr's process group owns the user's terminal: only then
  /// may odr set its mode or read it (else SIGTTOU / SIGTTIN).
  var isForeground: Bool { tcgetpgrp(user) == getpgrp() }

  /// Raw mode on the user's terminal, if odr is in the foreground: every
  /// byte goes to the command's terminal, which does the line editing,
  /// signals and output processing itself.
  func enterRawMode() -> Bool {
    guard isForeground else { return false }
    var raw = saved
    cfmakeraw(&raw)
    return tcsetattr(user, TCSADRAIN, &raw) == 0
  }

  /// The user's settings, as they were.
  func restore() {
    var settings = saved
    _ = tcsetattr(user, TCSADRAIN, &settings)
  }

  /// Gives the command's terminal the size of the user's.
  func copyWindowSize() {
    var size = winsize()
    if ioctl(user, UInt(TIOCGWINSZ), &size) == 0 { _ = ioctl(master, UInt(TIOCSWINSZ), &size) }
  }

  func close() {
    Glibc.close(master)
    Glibc.close(user)
  }
}
