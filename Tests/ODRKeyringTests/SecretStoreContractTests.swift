import Foundation
import ODRKeyring
import ODRTesting
import Testing

/// The behaviour every SecretStore shares, run against the real
/// gnome-keyring (through libsecret) and against the memory store.
@Suite(.enabled(if: TestSelection.untagged), .timeLimit(.minutes(2))) struct SecretStoreContractTests {
  enum Backend: String, CaseIterable, CustomTestStringConvertible {
    case secretService, memory
    var testDescription: String { rawValue }
  }

  func makeSUT(_ backend: Backend) throws -> any SecretStore {
    let service = "com.odr.test.\(UUID().uuidString.prefix(8).lowercased())"
    switch backend {
    case .secretService:
      _ = KeyringSession.shared
      return try SecretServiceStore(service: service)
    case .memory:
      return MemoryStore(service: service)
    }
  }

  static let trickyValues: [String] = [
    "k-123",
    #"with "double" and 'single' quotes, $dollar and `backticks`"#,
    "line one\nline two\r\nline three\n",
    "unicode: päßwörd ключ 鍵 🔑 \u{200B}",
    " leading and trailing spaces ",
    String(repeating: "x", count: KeyringInput.maxValueBytes),
  ]

  @Test(arguments: Backend.allCases, trickyValues)
  func valueRoundTripsExactly(backend: Backend, value: String) async throws {
    let store = try makeSUT(backend)
    try await store.setValue(value, for: "Key")
    #expect(try await store.value(for: "Key") == value)
  }

  @Test(arguments: Backend.allCases)
  func overwritingReplacesTheValue(backend: Backend) async throws {
    let store = try makeSUT(backend)
    try await store.setValue("old", for: "Key")
    try await store.setValue("new", for: "Key")
    #expect(try await store.value(for: "Key") == "new")
    #expect(try await store.names() == ["Key"])
  }

  @Test(arguments: Backend.allCases)
  func missingKeyIsNotFound(backend: Backend) async throws {
    let store = try makeSUT(backend)
    await #expect(throws: KeyringError.self) { try await store.value(for: "Missing") }
    do { _ = try await store.value(for: "Missing") } catch let error as KeyringError {
      #expect(error.code == .notFound)
      #expect(error.message.contains("Missing"))
    }
  }

  @Test(arguments: Backend.allCases)
  func namesListsOnlyThisServicesKeysSorted(backend: Backend) async throws {
    let store = try makeSUT(backend)
    let other = try makeSUT(backend)
    try await store.setValue("1", for: "Zeta")
    try await store.setValue("2", for: "Alpha")
    try await other.setValue("3", for: "Other")
    #expect(try await store.names() == ["Alpha", "Zeta"])
  }

  @Test(arguments: Backend.allCases)
  func valuesReadsManyAtOnce(backend: Backend) async throws {
    let store = try makeSUT(backend)
    for i in 0..<5 { try await store.setValue("value-\(i)", for: "K\(i)") }
    #expect(try await store.values(for: ["K1", "K3", "Absent"]) == ["K1": "value-1", "K3": "value-3"])
    #expect(try await store.values(for: nil).count == 5)
  }

  @Test(arguments: Backend.allCases)
  func valuesForManyNamesReadsThemAll(backend: Backend) async throws {
    let store = try makeSUT(backend)
    for i in 0..<30 { try await store.setValue("value-\(i)", for: "K\(i)") }
    let wanted = Set((0..<20).map { "K\($0)" } + ["Absent"])
    let values = try await store.values(for: wanted)
    #expect(values.count == 20)
    #expect(values["K7"] == "value-7")
    #expect(try await store.names().count == 30)
  }

  @Test(arguments: Backend.allCases)
  func deleteRemovesOneKeyAndReportsMisses(backend: Backend) async throws {
    let store = try makeSUT(backend)
    try await store.setValue("a", for: "A")
    try await store.setValue("b", for: "B")
    #expect(try await store.deleteValue(for: "A") == true)
    #expect(try await store.deleteValue(for: "A") == false)
    #expect(try await store.names() == ["B"])
  }

  @Test(arguments: Backend.allCases)
  func deleteAllEmptiesTheServiceOnly(backend: Backend) async throws {
    let store = try makeSUT(backend)
    let other = try makeSUT(backend)
    try await store.setValue("a", for: "A")
    try await store.setValue("b", for: "B")
    try await other.setValue("c", for: "C")
    #expect(try await store.deleteAll() == 2)
    #expect(try await store.names() == [])
    #expect(try await other.names() == ["C"])
  }

  @Test(arguments: Backend.allCases, ["", "1abc", "has space", "tab\tname", "slash/name", "ünïcode", String(repeating: "a", count: 129)])
  func invalidNamesAreRefused(backend: Backend, name: String) async throws {
    let store = try makeSUT(backend)
    do {
      try await store.setValue("v", for: name)
      Issue.record("stored under an invalid name")
    } catch let error as KeyringError {
      #expect(error.code == .invalidInput)
    }
  }

  @Test(arguments: Backend.allCases)
  func emptyAndOversizedValuesAreRefusedWithoutTheValue(backend: Backend) async throws {
    let store = try makeSUT(backend)
    let tooLarge = String(repeating: "s3cr3t", count: KeyringInput.maxValueBytes / 6 + 1)
    for value in ["", tooLarge] {
      do {
        try await store.setValue(value, for: "Key")
        Issue.record("stored an invalid value")
      } catch let error as KeyringError {
        #expect(error.code == .invalidInput)
        #expect(error.message.contains("Key"))
        #expect(!error.description.contains("s3cr3t"))
      }
    }
    #expect(try await store.names() == [])
  }

  @Test func longestValidNameIsAccepted() async throws {
    let store = try makeSUT(.secretService)
    let name = "A" + String(repeating: "b-._9", count: 25) + "zz"
    #expect(name.utf8.count == 128)
    try await store.setValue("v", for: name)
    #expect(try await store.names() == [name])
  }
}
