import ArgumentParser
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

  /// Words meant for a subcommand of another name: a signing key's public
  /// half is `public`, an identity's `recipient`; other tools' verbs.
  static let synonyms = ["public": "recipient", "recipient": "public", "create": "new", "generate": "new",
                         "ls": "list", "rm": "delete", "remove": "delete", "show": "list"]

  /// The message for `arguments` when, below a command group (`odr
  /// identity`, `odr trust`, …), they name no subcommand of it, else nil.
  static func nestedProblem(_ arguments: [String], root: any ParsableCommand.Type) -> String? {
    var subcommands = root.configuration.subcommands
    var path = ["odr"]
    for name in arguments {
      guard !name.hasPrefix("-"), !subcommands.isEmpty else { return nil }
      guard let index = subcommands.firstIndex(where: { $0._commandName == name }) else {
        guard path.count > 1 else { return nil }  // the root's own: problem(_:commands:) says it
        let group = path.joined(separator: " ")
        let listed = "`\(group) --help` lists them."
        let shown = String(name.prefix(40))
        let names = subcommands.map { $0._commandName }
        guard let guess = synonyms[name].flatMap({ names.contains($0) ? $0 : nil }) ?? NameSuggestion.closest(to: name, among: names) else {
          return "'\(shown)' is not a subcommand of \(group). \(listed)"
        }
        return "'\(shown)' is not a subcommand of \(group). Did you mean '\(guess)'? (\(listed))"
      }
      subcommands = subcommands[index].configuration.subcommands
      path.append(name)
    }
    return nil
  }

  /// The unknown option behind a missing one: ArgumentParser reports a
  /// missing option before an unknown one, so `odr pack DIR --ouput out`
  /// would say `--output` is missing. Parsing again with each missing
  /// option given a placeholder value finds the unknown option the user
  /// typed instead. Nil when `error` is not a missing option or no
  /// unknown option is behind it. Parses only: nothing runs.
  static func unknownBehindMissing(_ arguments: [String], error: any Error, root: any ParsableCommand.Type) -> (any Error)? {
    var arguments = arguments
    var error = error
    for _ in 0..<8 {
      let message = root.message(for: error)
      if message.hasPrefix("Unknown option") { return error }
      guard message.hasPrefix("Missing expected argument '--"),
            let name = message.split(separator: "'").dropFirst().first?.split(separator: " ").first else { return nil }
      arguments += [String(name), "1"]
      do { _ = try root.parseAsRoot(arguments) } catch let next { error = next; continue }
      return nil
    }
    return nil
  }

  /// "Did you mean" for an unknown option (`--verison`): the closest option
  /// of the command the arguments name, read from its help. Nil when
  /// `error` is not an unknown option or none is close.
  static func unknownOption(_ arguments: [String], error: any Error, root: any ParsableCommand.Type) -> ValidationError? {
    let message = root.message(for: error)
    guard message.hasPrefix("Unknown option '"), let typed = message.split(separator: "'").dropFirst().first, typed.hasPrefix("--") else { return nil }
    var command = root
    var path = ["odr"]
    for name in arguments {
      guard !name.hasPrefix("-"), let next = command.configuration.subcommands.first(where: { $0._commandName == name }) else { break }
      command = next
      path.append(name)
    }
    let help = root.helpMessage(for: command, includeHidden: false, columns: 1_000)
    let options = Set(help.split(whereSeparator: { " ,\n[]<>=".contains($0) }).filter { $0.hasPrefix("--") && $0.count > 2 }.map(String.init))
    guard let guess = NameSuggestion.closest(to: String(typed), among: options.sorted()) else { return nil }
    return ValidationError("Unknown option '\(typed.prefix(40))'. Did you mean '\(guess)'? See '\(path.joined(separator: " ")) --help'.")
  }
}
