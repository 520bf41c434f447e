import Foundation
import ODRAge
import ODRCLITesting
import ODRTesting
import Testing

/// `odr identity` and `odr signing-key`: one generic command group
/// (KeyringKeyCommand), each subcommand run on the built binary against the
/// real keyring, for both kinds of key.
@Suite(.enabled(if: TestSelection.untagged), .timeLimit(.minutes(2))) struct KeyringKeyCommandTests {
  @Test(arguments: [
    ("identity", "recipient", "age1", "AGE-SECRET-KEY-1"),
    ("signing-key", "public", "ed25519:", "ed25519-secret:"),
  ])
  func aKeyGoesInOutAndBackThroughEverySubcommand(command: String, publicCommand: String, publicPrefix: String, secretPrefix: String) async throws {
    let name = "round-trip-\(UUID().uuidString.prefix(8).lowercased())"
    func odr(_ arguments: [String], input: String? = nil) async throws -> Command.Result {
      try await Command.odr([command] + arguments, input: input, environment: KeyringSession.shared.environment)
    }
    let made = try await odr(["new", name])
    let publicKey = made.stdout.trimmingCharacters(in: .newlines)
    #expect(made.status == 0 && publicKey.hasPrefix(publicPrefix), "\(made.stderr)")
    #expect(try await odr([publicCommand, name]).stdout == made.stdout)
    #expect(try await odr(["list"]).stdout.contains("\(name)\t\(publicKey)\n"))
    let exported = try await odr(["export", name])
    #expect(exported.status == 0 && exported.stdout.contains(secretPrefix))

    let deleted = try await odr(["delete", name])
    #expect(deleted.status == 0 && deleted.stderr.contains("deleted") && deleted.stderr.contains("'\(name)'"))
    #expect(try await !odr(["list"]).stdout.contains(name))
    let missing = try await odr(["delete", name])
    #expect(missing.status == 3 && missing.stderr.contains("`odr \(command) list` shows them"))
    #expect(try await odr([publicCommand, name]).status == 3)

    let imported = try await odr(["import", name], input: exported.stdout)
    #expect(imported.status == 0 && imported.stderr.contains("'\(name)': \(publicKey)"), "\(imported.stderr)")
    #expect(try await odr([publicCommand, name]).stdout == made.stdout)
    // The private half is printed by export only.
    for result in [made, deleted, missing, imported] {
      #expect(!(result.stdout + result.stderr).contains(secretPrefix))
    }
    #expect(try await odr(["delete", name]).status == 0)
  }

  @Test func anIdentityImportTakesExactlyOne() async throws {
    let name = "two-\(UUID().uuidString.prefix(8).lowercased())"
    let file = AgeIdentity().fileText + AgeIdentity().fileText
    let result = try await Command.odr(["identity", "import", name], input: file, environment: KeyringSession.shared.environment)
    #expect(result.status == 2 && result.stderr.contains("holds 2 identities; import exactly one per name"), "\(result.stderr)")
    #expect(try await !Command.odr(["identity", "list"], environment: KeyringSession.shared.environment).stdout.contains(name))
  }
}
