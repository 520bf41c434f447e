import Foundation
import ODRBase
import ODRCatalog
import ODRKeyring
import ODRKeys
import ODRKeyFormat
import ODRKit
import ODRPublishing
import ODRResources
import ODRTesting
import ODRTrust
import Synchronization
import Testing

/// The fetch pipeline against `file://` catalogs and an in-memory store
/// that counts writes and can fail on demand.
@Suite(.enabled(if: TestSelection.untagged), .timeLimit(.minutes(3))) struct KeyImporterTests {
  struct Fixture {
    let root = FileManager.default.temporaryDirectory.appending(path: "odr-import-\(UUID().uuidString)")
    var source: URL { root.appending(path: "src") }
    var published: URL { root.appending(path: "pub") }
    var cache: URL { root.appending(path: "cache") }
    var version = 1

    func write(_ path: String, _ text: String) throws {
      let url = source.appending(path: path)
      try FileManager.default.createDirectory(at: url.deletingLastPathComponent(), withIntermediateDirectories: true)
      try Data(text.utf8).write(to: url)
    }

    /// Publishes `keys` as the APIKeys document, with a new version.
    mutating func publish(_ keys: String) async throws -> ResourceCatalog {
      try write("APIKeys.json", keys)
      version += 1
      var options = PackOptions()
      options.plaintextSecrets = true
      options.validateSecrets = { _, _ in }  // a hostile publisher: the importer must check for itself
      try await Publisher(source: source).pack(to: published, version: version, options: options)
      return try await ResourceCatalog.load(from: published, cacheHome: cache, trust: TrustPolicy(stateHome: root.appending(path: "state")))
    }

    func blobs() -> [String] {
      (try? FileManager.default.contentsOfDirectory(atPath: cache.appending(path: "odr/com.example.test/blobs").path)) ?? []
    }

    /// The service's import lock, in this fixture's own state folder.
    var lock: ImportLock { ImportLock(service: "com.example.test", stateHome: root.appending(path: "state")) }

    func remove() { try? FileManager.default.removeItem(at: root) }
  }

  func makeSUT() throws -> (Fixture, RecordingStore) {
    let fixture = Fixture()
    try fixture.write("tags.json", """
      { "bundle": "com.example.test", "tags": {
        "APIKeys": { "category": "prefetch", "secrets": true, "files": ["APIKeys.json"] },
        "Art": { "category": "onDemand", "files": ["art.txt"] } } }
      """)
    try fixture.write("art.txt", "art")
    return (fixture, RecordingStore(service: "com.example.test"))
  }

  static let v1 = #"{"keys": {"Weather": {"value": "w-1", "env": "WEATHER_KEY"}, "Maps": {"value": "m-1", "query": "key", "hosts": ["maps.example"]}}}"#

  @Test func firstImportAddsEveryKeyAndDeletesThePlaintext() async throws {
    var (fixture, store) = try makeSUT()
    defer { fixture.remove() }
    let report = try await KeyImporter(catalog: fixture.publish(Self.v1), store: store, lock: fixture.lock).fetch(tags: ["APIKeys"])
    #expect(report.keys.map(\.outcome) == [.added, .added])
    #expect(try await store.value(for: "Weather") == "w-1")
    #expect(try await store.names() == ["Maps", "Weather"])
    #expect(fixture.blobs().isEmpty)
    let record = try await store.value(for: KeyringInput.metadataName)
    #expect(record.contains("WEATHER_KEY") && record.contains("maps.example"))
    #expect(!record.contains("w-1"))
  }

  @Test func reimportingTheSameDocumentWritesNothing() async throws {
    var (fixture, store) = try makeSUT()
    defer { fixture.remove() }
    _ = try await KeyImporter(catalog: fixture.publish(Self.v1), store: store, lock: fixture.lock).fetch(tags: ["APIKeys"])
    let writes = store.writes
    let report = try await KeyImporter(catalog: fixture.publish(Self.v1), store: store, lock: fixture.lock).fetch(tags: ["APIKeys"])
    #expect(report.keys.map(\.outcome) == [.unchanged, .unchanged])
    #expect(store.writes == writes)
  }

  @Test func aChangedDocumentWritesOnlyTheChangedKeys() async throws {
    var (fixture, store) = try makeSUT()
    defer { fixture.remove() }
    _ = try await KeyImporter(catalog: fixture.publish(Self.v1), store: store, lock: fixture.lock).fetch(tags: ["APIKeys"])
    let writes = store.writes
    let v2 = Self.v1.replacingOccurrences(of: "w-1", with: "w-2")
    let report = try await KeyImporter(catalog: fixture.publish(v2), store: store, lock: fixture.lock).fetch(tags: ["APIKeys"])
    #expect(report.keys == [.init(name: "Maps", outcome: .unchanged), .init(name: "Weather", outcome: .changed)])
    // The one changed key and the metadata record (which records the
    // value each key's metadata goes with), between opening and closing
    // the import's journal.
    #expect(store.written.dropFirst(writes) == [KeyringInput.journalName, "Weather", KeyringInput.metadataName, KeyringInput.journalName])
    #expect(try await store.value(for: "Weather") == "w-2")
  }

  /// Only keys an earlier import wrote are pruned; a key stored by hand
  /// (`odr set`, secret-tool) is never touched.
  @Test func pruneDeletesOnlyImportedKeysNoLongerPublished() async throws {
    var (fixture, store) = try makeSUT()
    defer { fixture.remove() }
    try await store.setValue("old", for: "Legacy")
    let catalog = try await fixture.publish(#"{"Maps": "m-1", "Weather": "w-1", "Gone": "g-1"}"#)
    let kept = try await KeyImporter(catalog: catalog, store: store, lock: fixture.lock).fetch(tags: ["APIKeys"])
    #expect(!kept.keys.contains { $0.outcome == .pruned })
    let pruned = try await KeyImporter(catalog: fixture.publish(Self.v1), store: store, lock: fixture.lock).fetch(tags: ["APIKeys"], prune: true)
    #expect(pruned.keys.filter { $0.outcome == .pruned }.map(\.name) == ["Gone"])
    #expect(try await store.names() == ["Legacy", "Maps", "Weather"])
  }

  @Test func aDryRunSaysWhatWouldChangeAndWritesNothing() async throws {
    var (fixture, store) = try makeSUT()
    defer { fixture.remove() }
    _ = try await KeyImporter(catalog: fixture.publish(Self.v1), store: store, lock: fixture.lock).fetch(tags: ["APIKeys"])
    let (before, writes) = (try await store.valuesAndRecords(), store.writes)
    let report = try await KeyImporter(catalog: fixture.publish(#"{"Maps": "m-2", "New": "n-1"}"#), store: store, lock: fixture.lock)
      .fetch(tags: ["APIKeys"], prune: true, dryRun: true)
    #expect(report.dryRun)
    #expect(report.keys.map { "\($0.outcome) \($0.name)" } == ["changed Maps", "added New", "pruned Weather"])
    #expect(store.writes == writes)
    #expect(try await store.valuesAndRecords() == before)
  }

  @Test(arguments: [
    (#"{"_odr.journal": "x"}"#, "reserved"), (#"{"Path": "x"}"#, "PATH"), (#"{"keys": {"K": {"value": "x", "env": "GIT_SSH_COMMAND"}}}"#, "GIT_SSH_COMMAND"),
    (#"{"keys": {"K": {"value": "x", "env": "http_proxy"}}}"#, "upper-case"), (#"{"K": "a\u0000b"}"#, "NUL"),
  ])
  func documentsThatWouldTakeOverAJobAreRefusedAtImport(document: String, reason: String) async throws {
    var (fixture, store) = try makeSUT()
    defer { fixture.remove() }
    let error = await #expect(throws: KeysError.self) {
      try await KeyImporter(catalog: fixture.publish(document), store: store, lock: fixture.lock).fetch(tags: ["APIKeys"])
    }
    #expect(error?.message.contains(reason) == true, "\(error?.message ?? "")")
    #expect(store.writes == 0)
  }

  @Test func anInvalidDocumentChangesNothingAndLeavesNoPlaintext() async throws {
    var (fixture, store) = try makeSUT()
    defer { fixture.remove() }
    _ = try await KeyImporter(catalog: fixture.publish(Self.v1), store: store, lock: fixture.lock).fetch(tags: ["APIKeys"])
    let writes = store.writes
    let bad = #"{"Weather": "w-secret-2", "Maps": ""}"#
    await #expect(throws: KeysError.self) {
      try await KeyImporter(catalog: fixture.publish(bad), store: store, lock: fixture.lock).fetch(tags: ["APIKeys"])
    }
    #expect(store.writes == writes)
    #expect(try await store.value(for: "Weather") == "w-1")
    #expect(fixture.blobs().isEmpty)
  }

  @Test func aFailureHalfwayRestoresThePreviousValues() async throws {
    var (fixture, store) = try makeSUT()
    defer { fixture.remove() }
    _ = try await KeyImporter(catalog: fixture.publish(Self.v1), store: store, lock: fixture.lock).fetch(tags: ["APIKeys"])
    let before = try await store.values(for: nil)
    let v2 = #"{"Alpha": "a-new", "Maps": "m-2", "Weather": "w-2", "Zulu": "z-new"}"#
    store.failWrite(after: 2)
    await #expect(throws: KeyringError.self) {
      try await KeyImporter(catalog: fixture.publish(v2), store: store, lock: fixture.lock).fetch(tags: ["APIKeys"])
    }
    #expect(try await store.values(for: nil) == before)
  }

  @Test func aFailureThatAlsoBlocksTheRestoreSaysWhichKeysMayHaveChanged() async throws {
    var (fixture, store) = try makeSUT()
    defer { fixture.remove() }
    _ = try await KeyImporter(catalog: fixture.publish(Self.v1), store: store, lock: fixture.lock).fetch(tags: ["APIKeys"])
    let before = try await store.valuesAndRecords()
    store.failWrite(after: 2, persistently: true)  // the journal and Maps get through
    do {
      _ = try await KeyImporter(catalog: fixture.publish(#"{"Maps": "m-2", "Weather": "w-2"}"#), store: store, lock: fixture.lock).fetch(tags: ["APIKeys"])
      Issue.record("the import succeeded")
    } catch let error as KeysError {
      #expect(error.code == .interruptedImport)
      #expect(error.message.contains("Maps"))
      #expect(!error.message.contains("m-2"))
    }
    #expect(try await store.value(for: "Maps") == "m-2")  // the keyring is stuck half-way...
    store.stopFailing()
    // Readers see the values from before the import, and write nothing...
    let writes = store.writes
    #expect(try await store.keys().map(\.value).sorted() == ["m-1", "w-1"])
    #expect(try await store.keyValue(named: "Maps") == "m-1")
    #expect(store.writes == writes)
    // ...until the next import rolls it back from its journal.
    _ = try await KeyImporter(catalog: fixture.publish(Self.v1), store: store, lock: fixture.lock).fetch(tags: ["APIKeys"])
    #expect(try await store.valuesAndRecords() == before)
    #expect(try await store.valuesAndRecords()[KeyringInput.journalName] == nil)
  }

  @Test func aProcessKilledMidImportIsRolledBackByTheNextImport() async throws {
    var (fixture, store) = try makeSUT()
    defer { fixture.remove() }
    _ = try await KeyImporter(catalog: fixture.publish(Self.v1), store: store, lock: fixture.lock).fetch(tags: ["APIKeys"])
    let before = try await store.valuesAndRecords()
    // What a SIGKILL after two writes leaves: the journal and one new value.
    let journal = #"{"previous":{"Maps":"m-1","New":null}}"#
    try await store.setValue(journal, for: KeyringInput.journalName)
    try await store.setValue("m-9", for: "Maps")
    try await store.setValue("n-9", for: "New")
    let report = try await KeyImporter(catalog: fixture.publish(Self.v1), store: store, lock: fixture.lock).fetch(tags: ["APIKeys"])
    #expect(report.keys.map(\.outcome) == [.unchanged, .unchanged])
    #expect(try await store.valuesAndRecords() == before)
  }

  @Test func aKeyringThatStopsAnsweringStopsTheImportAtTheFirstTimeout() async throws {
    var (fixture, store) = try makeSUT()
    defer { fixture.remove() }
    _ = try await KeyImporter(catalog: fixture.publish(Self.v1), store: store, lock: fixture.lock).fetch(tags: ["APIKeys"])
    let before = try await store.valuesAndRecords()
    let many = (1...50).map { "\"K\($0)\": \"v-\($0)\"" }.joined(separator: ", ")
    store.failWrite(after: 3, persistently: true, with: .timeout)  // the journal and two keys get through
    let error = await #expect(throws: KeyringError.self) {
      try await KeyImporter(catalog: fixture.publish("{\(many)}"), store: store, lock: fixture.lock).fetch(tags: ["APIKeys"])
    }
    #expect(error?.code == .timeout)
    #expect(store.failedAttempts == 1)
    store.stopFailing()
    #expect(try await store.keys().map(\.value).sorted() == ["m-1", "w-1"])
    #expect(try await store.valuesAndRecords()[KeyringInput.journalName] != nil)
    _ = try await KeyImporter(catalog: fixture.publish(Self.v1), store: store, lock: fixture.lock).fetch(tags: ["APIKeys"])
    #expect(try await store.valuesAndRecords() == before)
  }

  /// An import in progress in another process: a reader sees the keys as
  /// they were before it, at once, and writes nothing; once it completes,
  /// the new values.
  @Test func aReaderOfALiveImportSeesThePreviousValuesAndWritesNothing() async throws {
    var (fixture, store) = try makeSUT()
    defer { fixture.remove() }
    _ = try await KeyImporter(catalog: fixture.publish(Self.v1), store: store, lock: fixture.lock).fetch(tags: ["APIKeys"])
    // A live process to name as the importer. SIGKILL, not terminate():
    // a child of this test process inherits its blocked SIGTERM; and its
    // own output, so it never holds the test runner's pipes open.
    let importer = Process()
    importer.executableURL = URL(filePath: "/bin/sleep")
    importer.arguments = ["60"]
    importer.standardOutput = FileHandle.nullDevice
    importer.standardError = FileHandle.nullDevice
    try importer.run()
    defer {
      kill(importer.processIdentifier, SIGKILL)
      importer.waitUntilExit()
    }
    let identity = try #require(ProcessIdentity(pid: importer.processIdentifier))
    let journal = String(decoding: try JSONEncoder().encode(Journal(previous: ["Maps": "m-1", "New": nil], importer: identity)), as: UTF8.self)
    // Nothing marks the import in this reader's state folder (another
    // environment, sudo -u, a wiped ~/.local/state): the journal alone does.
    try await store.setValue(journal, for: KeyringInput.journalName)
    try await store.setValue("m-2", for: "Maps")  // half-way through its import
    try await store.setValue("n-2", for: "New")
    let writes = store.writes
    #expect(try await store.keys().map(\.value).sorted() == ["m-1", "w-1"])
    #expect(try await store.keyValue(named: "Maps") == "m-1")
    await #expect(throws: KeyringError.self) { try await store.keyValue(named: "New") }
    #expect(try await APIKeyProvider(store: store, lock: fixture.lock).key("Maps") == "m-1")
    #expect(store.writes == writes)
    _ = try await store.deleteValue(for: KeyringInput.journalName)  // the import completes
    #expect(try await store.keys().map(\.value).sorted() == ["m-2", "n-2", "w-1"])
    #expect(try await store.keyValue(named: "Maps") == "m-2")
  }

  /// A journal another keyring client wrote, naming a key odr would never
  /// write: readers refuse it instead of reading it over the keys.
  @Test func aJournalOdrCouldNotHaveWrittenIsRefusedByReaders() async throws {
    var (fixture, store) = try makeSUT()
    defer { fixture.remove() }
    _ = try await KeyImporter(catalog: fixture.publish(Self.v1), store: store, lock: fixture.lock).fetch(tags: ["APIKeys"])
    for journal in [#"{"previous":{"LD PRELOAD":"x"}}"#, #"{"previous":{"_odr.journal":"x"}}"#, #"{"previous":{"Maps":""}}"#] {
      try await store.setValue(journal, for: KeyringInput.journalName)
      await #expect(throws: KeysError.self) { try await store.keys() }
      await #expect(throws: KeysError.self) { try await store.keyValue(named: "Maps") }
    }
  }

  /// An app's provider imports only its own bundle's catalog.
  @Test func aProviderRefusesTheCatalogOfAnotherBundle() async throws {
    var (fixture, _) = try makeSUT()
    defer { fixture.remove() }
    _ = try await fixture.publish(Self.v1)  // bundle com.example.test
    let store = RecordingStore(service: "com.example.other")
    let configuration = ODRConfiguration(locations: [fixture.published], trust: TrustPolicy(stateHome: fixture.root.appending(path: "state")))
    let provider = try APIKeyProvider(service: "com.example.other", configuration: configuration, store: store)
    let error = await #expect(throws: ResourceError.self) { try await provider.key("Maps") }
    #expect(error?.code == .integrity)
    #expect(store.writes == 0)
  }

  /// The shape of odr's journal, as another process writes it.
  struct Journal: Encodable {
    let previous: [String: String?]
    let importer: ProcessIdentity
  }

  @Test func tagsWithoutSecretsAreJustMadeAvailable() async throws {
    var (fixture, store) = try makeSUT()
    defer { fixture.remove() }
    let report = try await KeyImporter(catalog: fixture.publish(Self.v1), store: store, lock: fixture.lock).fetch(tags: ["Art"])
    #expect(report.keys.isEmpty)
    #expect(store.writes == 0)
    #expect(fixture.blobs().count == 1)
  }
}

/// A memory store that counts writes and can be told to fail.
final class RecordingStore: SecretStore {
  let service: String
  private let inner: MemoryStore
  private let state = Mutex((writes: 0, reads: 0, failAt: Int?.none, persistently: false, written: [String](),
                             failure: KeyringError.Code.locked, failedAttempts: 0))

  init(service: String) {
    self.service = service
    inner = MemoryStore(service: service)
  }

  var writes: Int { state.withLock { $0.writes } }
  /// Writes refused so far.
  var failedAttempts: Int { state.withLock { $0.failedAttempts } }
  var reads: Int { state.withLock { $0.reads } }
  /// The names written (set or deleted), in order.
  var written: [String] { state.withLock { $0.written } }

  /// Lets every write through again (the keyring is back).
  func stopFailing() { state.withLock { $0.failAt = nil } }
  /// Lets `more` writes through, then fails the next one (and, if
  /// `persistently`, every one after it).
  func failWrite(after more: Int, persistently: Bool = false, with code: KeyringError.Code = .locked) {
    state.withLock { state in
      state.failAt = state.writes + more
      state.persistently = persistently
      state.failure = code
    }
  }

  private func countWrite(_ name: String) throws {
    try state.withLock { state in
      if let failAt = state.failAt, state.writes >= failAt {
        if !state.persistently { state.failAt = nil }
        state.failedAttempts += 1
        throw KeyringError(state.failure, state.failure == .locked ? "The keyring collection 'Login' is locked." : "The keyring did not answer.")
      }
      state.writes += 1
      state.written.append(name)
    }
  }

  func setValue(_ value: String, for name: String) async throws {
    try countWrite(name)
    try await inner.setValue(value, for: name)
  }
  func value(for name: String) async throws -> String {
    state.withLock { $0.reads += 1 }
    return try await inner.value(for: name)
  }
  func values(for names: Set<String>?) async throws -> [String: String] {
    state.withLock { $0.reads += 1 }
    return try await inner.values(for: names)
  }
  func deleteValue(for name: String) async throws -> Bool {
    try countWrite(name)
    return try await inner.deleteValue(for: name)
  }
  func valuesAndRecords() async throws -> [String: String] {
    state.withLock { $0.reads += 1 }
    return try await inner.valuesAndRecords()
  }
  func names() async throws -> [String] { await inner.names() }
  func deleteAll() async throws -> Int { await inner.deleteAll() }
}
