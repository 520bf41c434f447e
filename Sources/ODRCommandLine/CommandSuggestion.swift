import ODRBase

/// Catches an unknown subcommand before ArgumentParser does ("Unexpected
/// argument"), so `odr fecth` says what was meant and `odr help nope` is a
/// usage error (exit 2) instead of the root help.
enum CommandSuggestion {
  /// The message for `arguments` when they name no subcommand, else nil.
  static func problem(_ arguments: [String], commands: [String]) -> String? {
    guard let first = arguments.first, !first.hasPrefix("-") else { return nil }
    let name = first == "help" ? arguments.dropFirst().first : first
    guard let name, !name.hasPrefix("-"), !commands.contains(name) else { return nil }
    let shown = String(name.prefix(40))
    guard let guess = NameSuggestion.closest(to: name, among: commands) else {
      return "'\(shown)' is not an odr command. `odr --help` lists them."
    }
    return "'\(shown)' is not an odr command. Did you mean '\(guess)'? (`odr --help` lists them.)"
  }
}
