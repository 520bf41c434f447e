@testable import ODRKeyring
import Testing

/// Without a reachable keyring, an app is told what an app can do (a store
/// of its own), and `odr` what a command can do (`--store kernel`,
/// `--fetch`, a throwaway keyring).
@Suite struct KeyringAdviceTests {
  @Test(arguments: [KeyringError.noSessionBus(nil), KeyringError.noProvider(nil)])
  func eachSideGetsItsOwnAdvice(_ error: KeyringError) {
    #expect(error.message.contains("APIKeyProvider(store: try KernelKeyringStore(service: …))") && error.message.contains("MemoryStore"), "\(error.message)")
    #expect(!error.message.contains("odr "), "\(error.message)")
    let command = error.forCommandLine
    #expect(command.code == error.code)
    #expect(command.message.contains("`--store kernel`") && command.message.contains("odr exec --fetch TAG") && command.message.contains("dbus-run-session"), "\(command.message)")
    #expect(!command.message.contains("APIKeyProvider"), "\(command.message)")
  }

  @Test func otherErrorsAreTheSameForBoth() {
    let error = KeyringError.notFound("Weather", service: "com.example.demo")
    #expect(error.forCommandLine.message == error.message)
  }
}
