import ODRBase
import Foundation
@testable import ODRExec
import ODRKeyFormat
import ODRTesting
import Testing

/// Every format is read back by the consumer it is made for: bash and dash
/// for shell and dotenv, JSONSerialization, and a parser that follows
/// GitHub's documented `$GITHUB_ENV` format.
@Suite(.enabled(if: TestSelection.untagged), .timeLimit(.minutes(2))) struct EnvFormatTests {
  let variables = try! SecretVariables(keys: TrickyValues.all.map { APIKey(name: $0.key, value: $0.value) })
  var expected: [String: String] { Dictionary(uniqueKeysWithValues: variables.variables.map { ($0.name, $0.value) }) }

  /// Runs `script` with `shell`; the script prints the variables NUL-separated.
  func readBack(_ shell: String, _ script: String, file: String) async throws -> [String: String] {
    let folder = FileManager.default.temporaryDirectory.appending(path: "odr-env-\(UUID().uuidString)")
    try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
    defer { try? FileManager.default.removeItem(at: folder) }
    try Data(file.utf8).write(to: folder.appending(path: "vars"))
    let names = variables.variables.map(\.name)
    let printAll = "printf '%s\\0' " + names.map { "\"$\($0)\"" }.joined(separator: " ")
    let result = try await Command.run(shell, ["-c", "cd '\(folder.path)' && \(script) && \(printAll)"], environment: ["PATH": "/usr/bin:/bin"])
    #expect(result.status == 0, "\(result.stderr)")
    let values = result.stdout.split(separator: "\0", omittingEmptySubsequences: false).dropLast().map(String.init)
    return Dictionary(uniqueKeysWithValues: zip(names, values))
  }

  @Test func shellFormatSurvivesEvalInBashAndDash() async throws {
    let text = try EnvFormat.shell.render(variables).stdout
    #expect(try await readBack("/bin/bash", #"eval "$(cat vars)""#, file: text) == expected)
    #expect(try await readBack("/bin/sh", #"eval "$(cat vars)""#, file: text) == expected)
    // Exported, not just set: a child process sees them.
    let child = try await Command.run("/bin/bash", ["-c", "eval \"$1\"; printenv UNICODE", "-", text])
    #expect(child.stdout == expected["UNICODE"]! + "\n")
  }

  @Test func dotenvFormatSurvivesSetASource() async throws {
    let text = try EnvFormat.dotenv.render(variables).stdout
    #expect(try await readBack("/bin/sh", "set -a; . ./vars; set +a", file: text) == expected)
    #expect(try await readBack("/bin/bash", "set -a; . ./vars; set +a", file: text) == expected)
  }

  @Test func jsonFormatParsesBack() throws {
    let text = try EnvFormat.json.render(variables).stdout
    let object = try JSONSerialization.jsonObject(with: Data(text.utf8)) as? [String: String]
    #expect(object == expected)
  }

  @Test func githubFileParsesBackAndEveryLineIsMasked() throws {
    let rendered = try EnvFormat.github.render(variables)
    let file = try #require(rendered.githubEnv)
    #expect(try GitHubEnvFile.parse(file) == expected)
    let masks = Set(rendered.stdout.split(separator: "\n").map(String.init))
    for value in expected.values {
      for line in value.split(whereSeparator: { $0 == "\n" || $0 == "\r\n" }) {
        let escaped = String(line).replacingOccurrences(of: "%", with: "%25").replacingOccurrences(of: "\r", with: "%0D")
        #expect(masks.contains("::add-mask::" + escaped), "no mask for a line of \(value.count) characters")
      }
    }
    // Delimiters are random: two renders differ.
    #expect(try EnvFormat.github.render(variables).githubEnv != file)
  }

  /// github-output: the same blocks for `$GITHUB_OUTPUT`, the same masks;
  /// --allow-unmasked drops the masks only.
  @Test func githubOutputIsTheSameBlocksForTheOutputFile() throws {
    #expect(EnvFormat.github.githubFileVariable == "GITHUB_ENV")
    #expect(EnvFormat.githubOutput.githubFileVariable == "GITHUB_OUTPUT")
    #expect(EnvFormat.json.githubFileVariable == nil)
    let rendered = try EnvFormat.githubOutput.render(variables)
    #expect(try GitHubEnvFile.parse(try #require(rendered.githubEnv)) == expected)
    #expect(rendered.stdout == (try EnvFormat.github.render(variables)).stdout)
    let unmasked = try EnvFormat.githubOutput.render(variables, allowUnmasked: true)
    #expect(unmasked.stdout.isEmpty)
    #expect(try GitHubEnvFile.parse(try #require(unmasked.githubEnv)) == expected)
  }

  @Test func gitlabRefusesWhatItCannotMaskUnlessAllowed() throws {
    let short = try SecretVariables(keys: [APIKey(name: "Short", value: "abc123")])
    let error = #expect(throws: ExecError.self) { try EnvFormat.gitlab.render(short) }
    #expect(error?.code == .unsupportedValue)
    #expect(error?.message.contains("abc123") == false)
    #expect(try EnvFormat.gitlab.render(short, allowUnmasked: true).stdout == "SHORT=abc123\n")
    let odd = try SecretVariables(keys: [APIKey(name: "Odd", value: "has|pipe-chars")])
    #expect(throws: ExecError.self) { try EnvFormat.gitlab.render(odd) }
    let fine = try SecretVariables(keys: [APIKey(name: "Token", value: "glpat-Ab3_x.y~z@host:9/+=")])
    #expect(try EnvFormat.gitlab.render(fine).stdout == "TOKEN=glpat-Ab3_x.y~z@host:9/+=\n")
    let multiline = try SecretVariables(keys: [APIKey(name: "Pem", value: "line one is long\nline two")])
    #expect(throws: ExecError.self) { try EnvFormat.gitlab.render(multiline, allowUnmasked: true) }
  }
}

/// A reader of `$GITHUB_ENV` as GitHub documents it: `NAME=value` lines, or
/// `NAME<<DELIMITER`, the value's lines, then a line holding only the
/// delimiter; the value is its lines joined with "\n".
enum GitHubEnvFile {
  struct Malformed: Error {}

  static func parse(_ text: String) throws -> [String: String] {
    var result: [String: String] = [:]
    var lines = text.components(separatedBy: "\n")[...]
    if lines.last == "" { lines.removeLast() }
    while let line = lines.popFirst() {
      if let range = line.range(of: "<<") {
        let name = String(line[..<range.lowerBound])
        let delimiter = String(line[range.upperBound...])
        var value: [String] = []
        while true {
          guard let next = lines.popFirst() else { throw Malformed() }
          if next == delimiter { break }
          value.append(next)
        }
        result[name] = value.joined(separator: "\n")
      } else if let equals = line.firstIndex(of: "=") {
        result[String(line[..<equals])] = String(line[line.index(after: equals)...])
      } else {
        throw Malformed()
      }
    }
    return result
  }
}
