import Foundation
@testable import ODRKeyring
import ODRTesting
import Testing

/// The kernel keyring store in this process, against the real kernel
/// (this user's keyring; each test deletes its service's keyring), and
/// keyutils' `keyctl` as the peer.
@Suite(.enabled(if: TestSelection.untagged), .timeLimit(.minutes(1))) struct KernelKeyringStoreTests {
  var service = "com.odr.kernel.\(UUID().uuidString.prefix(8).lowercased())"

  func withStore(_ body: (KernelKeyringStore) async throws -> Void) async throws {
    let store = try KernelKeyringStore(service: service)
    do {
      try await body(store)
      try store.deleteAll()
    } catch {
      _ = try? store.deleteAll()  // the test's own failure is the one to report
      throw error
    }
  }

  /// (A user other than root has 20,000 bytes of quota in all, which every
  /// kernel test of the suite shares: the largest value the kernel takes is
  /// KernelKeyringStoreAsRootTests'.)
  @Test(arguments: ["k-123", "line one\nline two\r\n", "unicode: päßwörd ключ 🔑", " spaced ", String(repeating: "x", count: 5000)])
  func valuesRoundTripAndKeyctlPrintsThem(value: String) async throws {
    try await Self.roundTrip(value, service: service)
  }

  static func roundTrip(_ value: String, service: String) async throws {
    try await KernelKeyringStoreTests(service: service).withStore { store in
      try store.setValue("first", for: "Weather")
      try store.setValue(value, for: "Weather")  // updated in place
      #expect(try store.value(for: "Weather") == value)
      let pipe = try await Command.run("/usr/bin/env", ["keyctl", "pipe", "%user:odr:\(service):Weather"])
      #expect(pipe.status == 0 && pipe.stdout == value, "\(pipe.stderr)")
    }
  }

  @Test func namesRecordsAndDeletion() async throws {
    try await withStore { store in
      #expect(try store.names().isEmpty)
      #expect(try store.values(for: nil).isEmpty)
      try store.setValue("w", for: "Weather")
      try store.setValue("m", for: "Maps")
      try store.setValue("{}", for: KeyringInput.journalName)
      #expect(try store.names() == ["Maps", "Weather"])
      #expect(try store.values(for: nil) == ["Maps": "m", "Weather": "w"])
      #expect(try await store.valuesAndRecords() == ["Maps": "m", "Weather": "w", KeyringInput.journalName: "{}"])
      let (maps, journal) = try await store.valueAndJournal(for: "Maps")
      #expect(maps == "m" && journal == "{}")
      #expect(try store.deleteValue(for: "Maps"))
      #expect(try !store.deleteValue(for: "Maps"))
      #expect(throws: KeyringError.self) { try store.value(for: "Maps") }
      #expect(try store.deleteAll() == 1)
      let show = try await Command.run("/usr/bin/env", ["keyctl", "search", "@u", "keyring", "odr:\(service)"])
      #expect(show.status != 0)  // the service's keyring went with its keys
    }
  }

  @Test func aValueOverTheKernelsLimitIsRefusedBeforeTheCall() async throws {
    try await withStore { store in
      let error = #expect(throws: KeyringError.self) { try store.setValue(String(repeating: "x", count: 32_768), for: "Big") }
      #expect(error?.code == .invalidInput && error?.message.contains("at most 32767 bytes") == true)
    }
  }

  @Test(arguments: [(ENOSYS, KeyringError.Code.noProvider, "seccomp"), (EPERM, .noProvider, "seccomp"), (EDQUOT, .quotaExceeded, "quota"),
                    (EACCES, .failed, "denied")] as [(Int32, KeyringError.Code, String)])
  func eachRefusalSaysWhatItIs(errno: Int32, code: KeyringError.Code, words: String) {
    let error = KernelKeyringStore.failure(errno, "store Weather of s")
    #expect(error.code == code && error.message.contains(words), "\(error.message)")
  }
}

/// The largest value the kernel takes in one key (32,767 bytes): over an
/// ordinary user's whole quota, so as root (scripts/test's root phase).
@Suite(.enabled(if: TestSelection.root)) struct KernelKeyringStoreAsRootTests {
  @Test func theLargestValueRoundTrips() async throws {
    try #require(getuid() == 0, "the root group runs as root (scripts/test)")
    try await KernelKeyringStoreTests.roundTrip(String(repeating: "x", count: KernelKeyringStore.maxValueBytes),
                                                service: "com.odr.kernel.\(UUID().uuidString.prefix(8).lowercased())")
  }
}
