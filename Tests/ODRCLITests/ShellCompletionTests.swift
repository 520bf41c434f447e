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

  /// What bash offers after each of `requests`' words (the last one is
  /// the word being completed), one bash for all of them.
  func complete(_ requests: [[String]], environment: [String: String]) async throws -> [[String]] {
    let script = root.appending(path: "odr.bash")
    if !FileManager.default.fileExists(atPath: script.path) {
      let generated = try await Command.odr(["--generate-completion-script", "bash"], environment: environment)
      try #require(generated.status == 0, "\(generated.stderr)")
      try Data(generated.stdout.utf8).write(to: script)
    }
    let end = "--- end of request ---"
    let runs = requests.map { words in
      let quoted = words.map { "'\($0)'" }.joined(separator: " ")
      return """
        COMP_WORDS=(\(quoted)); COMP_CWORD=\(words.count - 1); COMP_LINE='\(words.joined(separator: " "))'; COMP_POINT=${#COMP_LINE}; COMPREPLY=()
        _odr odr "${COMP_WORDS[COMP_CWORD]}" "${COMP_WORDS[COMP_CWORD-1]}"
        printf '%s\\n' "${COMPREPLY[@]}" '\(end)'
        """
    }
    var environment = environment
    environment["PATH"] = Paths.odr.deletingLastPathComponent().path + ":" + (environment["PATH"] ?? "/usr/bin:/bin")
    let result = try await Command.run("/bin/bash", ["-c", (["source '\(script.path)'"] + runs).joined(separator: "\n")], environment: environment)
    try #require(result.status == 0, "\(result.stderr)")
    let offers = result.stdout.split(separator: "\n").split(separator: Substring(end), omittingEmptySubsequences: false).map { $0.map(String.init) }
    try #require(offers.count == requests.count + 1 && offers.last == [], "\(result.stdout)")
    return Array(offers.dropLast())
  }

  /// What bash offers after `words`.
  func complete(_ words: [String], environment: [String: String]) async throws -> [String] {
    try await complete([words], environment: environment)[0]
  }

  @Test func completesAFilePathAKeyNameAndATagName() async throws {
    defer { try? FileManager.default.removeItem(at: root) }
    try FileManager.default.createDirectory(at: root, withIntermediateDirectories: true)
    let env = KeyringSession.shared.environment

    // A path: `odr exec --env-file <TAB>` offers files.
    try Data("A=1\n".utf8).write(to: root.appending(path: "ci.env"))
    // A key: `odr get <TAB>` offers the keys of the service, from the keyring.
    for name in ["Weather", "Maps"] {
      let set = try await Command.odr(["set", name, "--service", service], input: "k-\(name)", environment: env)
      try #require(set.status == 0, "\(set.stderr)")
    }
    // A tag: `odr begin <TAB>` offers the tags of the catalog, from disk.
    let source = root.appending(path: "src"), published = root.appending(path: "pub")
    try FileManager.default.createDirectory(at: source, withIntermediateDirectories: true)
    try Data(#"{"bundle": "\#(service)", "tags": {"Level1": {"category": "onDemand", "files": ["a.txt"]}, "Level2": {"category": "onDemand", "files": ["a.txt"]}}}"#.utf8)
      .write(to: source.appending(path: "tags.json"))
    try Data("a".utf8).write(to: source.appending(path: "a.txt"))
    let pack = try await Command.odr(["pack", source.path, "--output", published.path, "--quiet"], environment: env)
    try #require(pack.status == 0, "\(pack.stderr)")
    // Catalog folders: verify's and publish's arguments, --catalog's value.
    let folderWords = [["odr", "verify"], ["odr", "publish"], ["odr", "publish", published.path], ["odr", "begin", "--catalog"]]

    let offers = try await complete([
      ["odr", "exec", "--env-file", "\(root.path)/ci"],
      ["odr", "get", "--service", service, "W"],
      ["odr", "delete", "--service", service, ""],
      ["odr", "begin", "--catalog", published.path, "Lev"],
    ] + folderWords.map { $0 + ["\(root.path)/pu"] }, environment: env)
    #expect(offers[0] == ["\(root.path)/ci.env"])
    #expect(offers[1] == ["Weather"])
    #expect(offers[2].sorted() == ["Maps", "Weather"])
    #expect(offers[3] == ["Level1", "Level2"])
    for (words, offered) in zip(folderWords, offers.dropFirst(4)) {
      #expect(offered == [published.path], "\(words)")
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
