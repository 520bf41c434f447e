import Foundation
import ODRKeyring
@testable import ODRKeys
import ODRKeyFormat
import Testing
import ODRTesting

/// Keys carry their provenance (docs/trust.md): the trust roots of the
/// catalog they were imported from. A fetch under other roots replaces or
/// prunes them; a provider that pins its own roots never serves another's.
@Suite(.enabled(if: TestSelection.untagged)) struct KeyProvenanceTests {
  static let real = "ed25519:REAL", other = "ed25519:OTHER"
  let folder = FileManager.default.temporaryDirectory.appending(path: "odr-provenance-\(UUID().uuidString)")

  func makeSUT() -> (MemoryStore, ImportTransaction) {
    let store = MemoryStore(service: "com.example.provenance", stateHome: folder)
    return (store, ImportTransaction(store: store))
  }

  static func keys(_ values: [String: String], under roots: [String]) -> [String: APIKey] {
    values.reduce(into: [:]) { keys, pair in
      var metadata = KeyMetadata(hosts: ["api.example"])
      metadata.importedUnder = roots
      keys[pair.key] = APIKey(name: pair.key, value: pair.value, metadata: metadata)
    }
  }

  @Test func aFetchUnderOtherRootsPrunesWhatItNoLongerHolds() async throws {
    defer { try? FileManager.default.removeItem(at: folder) }
    let (store, transaction) = makeSUT()
    try await store.setValue("by-hand", for: "Manual")
    _ = try await transaction.apply(Self.keys(["Weather": "w", "Maps": "m"], under: [Self.other]), prune: false, dryRun: false, tags: ["APIKeys"])
    let report = try await transaction.apply(Self.keys(["Weather": "w2"], under: [Self.real]), prune: false, dryRun: false, tags: ["APIKeys"])
    #expect(report.keys.map(\.name) == ["Maps", "Weather"])
    #expect(report.keys.first { $0.name == "Maps" }?.outcome == .pruned)
    let values = try await store.valuesAndRecords()
    #expect(values["Maps"] == nil)
    #expect(values["Weather"] == "w2")
    #expect(values["Manual"] == "by-hand")  // stored by hand: no provenance, never pruned
  }

  @Test func aFetchUnderTheSameRootsKeepsWhatItNoLongerHoldsWithoutPrune() async throws {
    defer { try? FileManager.default.removeItem(at: folder) }
    let (store, transaction) = makeSUT()
    _ = try await transaction.apply(Self.keys(["Weather": "w", "Maps": "m"], under: [Self.real]), prune: false, dryRun: false, tags: ["APIKeys"])
    _ = try await transaction.apply(Self.keys(["Weather": "w2"], under: [Self.real]), prune: false, dryRun: false, tags: ["APIKeys"])
    #expect(try await store.valuesAndRecords()["Maps"] == "m")
  }

  @Test func aProviderThatPinsItsRootsFetchesAKeyImportedUnderAnother() async throws {
    defer { try? FileManager.default.removeItem(at: folder) }
    let (store, transaction) = makeSUT()
    _ = try await transaction.apply(Self.keys(["Weather": "planted"], under: [Self.other]), prune: false, dryRun: false, tags: ["APIKeys"])
    let provider = APIKeyProvider(store: store, roots: [Self.real]) {
      _ = try await ImportTransaction(store: store).apply(Self.keys(["Weather": "real"], under: [Self.real]), prune: false, dryRun: false, tags: ["APIKeys"])
    }
    #expect(try await provider.key("Weather") == "real")
    let unpinned = APIKeyProvider(store: store)
    #expect(try await unpinned.key("Weather") == "real")
  }

  /// Provenance goes with the value it was recorded with (issue 54, item
  /// 10): a same-name item another library wrote over or beside odr's is
  /// served as a key stored by hand — no hosts (the proxy sends it
  /// nowhere), no roots — and the next fetch records it again.
  @Test func aValueAnotherLibraryPlantedCarriesNoneOfTheImportsMetadata() async throws {
    defer { try? FileManager.default.removeItem(at: folder) }
    let (store, transaction) = makeSUT()
    _ = try await transaction.apply(Self.keys(["Weather": "w", "Maps": "m"], under: [Self.real]), prune: false, dryRun: false, tags: ["APIKeys"])
    try await store.setValue("planted", for: "Weather")
    let keys = try await store.keys()
    #expect(keys.first { $0.name == "Weather" }?.metadata == KeyMetadata() && keys.first { $0.name == "Weather" }?.value == "planted")
    #expect(keys.first { $0.name == "Maps" }?.metadata.hosts == ["api.example"] && keys.first { $0.name == "Maps" }?.metadata.importedUnder == [Self.real])
    #expect(try await store.key(named: "Weather").metadata.hosts == nil)
    let report = try await transaction.apply(Self.keys(["Weather": "w", "Maps": "m"], under: [Self.real]), prune: false, dryRun: false, tags: ["APIKeys"])
    #expect(report.keys.first { $0.name == "Weather" }?.outcome == .changed)
    #expect(try await store.key(named: "Weather").metadata.hosts == ["api.example"])
  }
}
