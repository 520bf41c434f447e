import ODRBase
import ODRAge
import ODRKeyring
import ODRKeys
import ODRTesting
import ODRSigning
import Testing

/// The keyring of odr's own private keys fails loudly: a damaged item is
/// named, and a keyring that cannot answer never reads as a free name.
@Suite(.enabled(if: TestSelection.untagged)) struct PrivateKeyringTests {
  @Test func aDamagedIdentityIsNamedNotSkipped() async throws {
    let good = AgeIdentity()
    let store = MemoryStore(service: PrivateKeyring.identityService, items: ["laptop": good.secretKeyString, "broken": "AGE-SECRET-KEY-1NOTAKEY"])
    let error = await #expect(throws: TrustError.self) { try await PrivateKeyring(store: store).identities() }
    #expect(error?.message.contains("'broken'") == true, "\(String(describing: error))")
    #expect(error?.message.contains("odr identity delete broken") == true)
    try await store.deleteValue(for: "broken")
    #expect(try await PrivateKeyring(store: store).identities().count == 1)
  }

  @Test func aKeyringThatCannotAnswerIsNotAFreeName() async throws {
    let keyring = PrivateKeyring(store: Unanswering(service: PrivateKeyring.identityService))
    let error = await #expect(throws: KeyringError.self) { try await keyring.add("AGE-SECRET-KEY-1…", as: "laptop") }
    #expect(error?.code == .locked)
  }

  /// A store whose every call fails as a locked keyring does.
  struct Unanswering: SecretStore {
    let service: String
    func fail() -> KeyringError { KeyringError(.locked, "locked") }
    func setValue(_ value: String, for name: String) async throws { Issue.record("wrote to a keyring it could not read"); throw fail() }
    func value(for name: String) async throws -> String { throw fail() }
    func values(for names: Set<String>?) async throws -> [String: String] { throw fail() }
    func deleteValue(for name: String) async throws -> Bool { throw fail() }
    func names() async throws -> [String] { throw fail() }
    func deleteAll() async throws -> Int { throw fail() }
  }
}
