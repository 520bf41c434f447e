import Foundation
@testable import ODRCommandLine
import ODRCLITesting
import ODRTesting
import Testing

/// The bash completion odr generates, driven as bash drives it (COMP_WORDS,
/// COMP_CWORD, the completion function, COMPREPLY): file names where an
/// argument is a path, key names from the keyring, tag names from the
/// catalog on disk.
@Suite(.enabled(if: TestSelection.untagged), .timeLimit(.minutes(2))) struct ShellCompletionTests {
  let root = FileManager.default.temporaryDirectory.appending(path: "odr-completion-\(UUID().uuidString)")
  let service = "com.odr.completion.\(UUID().uuidString.prefix(8).lowercased())"

  /// What bash offers after `words` (the last one is the word being completed).
  func complete(_ words: [String], environment: [String: String]) async throws -> [String] {
    let script = root.appending(path: "odr.bash")
    if !FileManager.default.fileExists(atPath: script.path) {
      let generated = try await Command.odr(["--generate-completion-script", "bash"], environment: environment)
      try #require(generated.status == 0, "\(generated.stderr)")
      try Data(generated.stdout.utf8).write(to: script)
    }
    let quoted = words.map { "'\($0)'" }.joined(separator: " ")
    let line = words.joined(separator: " ")
    var environment = environment
    environment["PATH"] = Paths.odr.deletingLastPathComponent().path + ":" + (environment["PATH"] ?? "/usr/bin:/bin")
    let result = try await Command.run("/bin/bash", ["-c", """
      source '\(script.path)'
      COMP_WORDS=(\(quoted)); COMP_CWORD=\(words.count - 1); COMP_LINE='\(line)'; COMP_POINT=${#COMP_LINE}
      _odr odr "${COMP_WORDS[COMP_CWORD]}" "${COMP_WORDS[COMP_CWORD-1]}"
      printf '%s\\n' "${COMPREPLY[@]}"
      """], environment: environment)
    try #require(result.status == 0, "\(result.stderr)")
    return result.stdout.split(separator: "\n").map(String.init)
  }

  @Test func completesAFilePathAKeyNameAndATagName() async throws {
    defer { try? FileManager.default.removeItem(at: root) }
    try FileManager.default.createDirectory(at: root, withIntermediateDirectories: true)
    let env = KeyringSession.shared.environment

    // A path: `odr exec --env-file <TAB>` offers files.
    try Data("A=1\n".utf8).write(to: root.appending(path: "ci.env"))
    #expect(try await complete(["odr", "exec", "--env-file", "\(root.path)/ci"], environment: env) == ["\(root.path)/ci.env"])

    // A key: `odr get <TAB>` offers the keys of the service, from the keyring.
    for name in ["Weather", "Maps"] {
      let set = try await Command.odr(["set", name, "--service", service], input: "k-\(name)", environment: env)
      try #require(set.status == 0, "\(set.stderr)")
    }
    #expect(try await complete(["odr", "get", "--service", service, "W"], environment: env) == ["Weather"])
    #expect(try await complete(["odr", "delete", "--service", service, ""], environment: env).sorted() == ["Maps", "Weather"])

    // A tag: `odr begin <TAB>` offers the tags of the catalog, from disk.
    let source = root.appending(path: "src"), published = root.appending(path: "pub")
    try FileManager.default.createDirectory(at: source, withIntermediateDirectories: true)
    try Data(#"{"bundle": "\#(service)", "tags": {"Level1": {"category": "onDemand", "files": ["a.txt"]}, "Level2": {"category": "onDemand", "files": ["a.txt"]}}}"#.utf8)
      .write(to: source.appending(path: "tags.json"))
    try Data("a".utf8).write(to: source.appending(path: "a.txt"))
    let pack = try await Command.odr(["pack", source.path, "--output", published.path, "--quiet"], environment: env)
    try #require(pack.status == 0, "\(pack.stderr)")
    #expect(try await complete(["odr", "begin", "--catalog", published.path, "Lev"], environment: env) == ["Level1", "Level2"])

    // Catalog folders: verify's and publish's arguments, --catalog's value.
    for words in [["odr", "verify"], ["odr", "publish"], ["odr", "publish", published.path], ["odr", "begin", "--catalog"]] {
      #expect(try await complete(words + ["\(root.path)/pu"], environment: env) == [published.path], "\(words)")
    }
  }

  /// Another program may store any name under a service; bash's `compgen -W`
  /// expands the words it is offered, so a name holding `$(…)` or a backtick
  /// would run as the user. Only names that follow odr's rules are offered.
  @Test func aNameAnotherProgramStoredIsNeverEvaluated() async throws {
    defer { try? FileManager.default.removeItem(at: root) }
    try FileManager.default.createDirectory(at: root, withIntermediateDirectories: true)
    let env = KeyringSession.shared.environment
    let ran = root.appending(path: "ran")
    for name in ["Weather", "W$(touch \(ran.path))", "W`touch \(ran.path)`", "W x"] {
      let stored = try await Command.secretTool(["store", "--label=foreign", "service", service, "key", name], input: "v", environment: env)
      try #require(stored.status == 0, "\(stored.stderr)")
    }
    #expect(try await complete(["odr", "get", "--service", service, "W"], environment: env) == ["Weather"])
    #expect(!FileManager.default.fileExists(atPath: ran.path))
  }

  @Test(arguments: [
    (["Weather", "Maps", "_odr.metadata"], "", ["Weather", "Maps"]),
    (["Weather", "W$(id)", "W`id`", "W x", "W'q", "W;id", "Wé"], "W", ["Weather"]),
    (["a.b-c_d", "1abc", ""], "", ["a.b-c_d"]),
  ]) func offersOnlyNamesThatFollowTheRules(names: [String], prefix: String, offered: [String]) {
    #expect(Completions.offerable(names, startingWith: prefix) == offered)
  }
}
