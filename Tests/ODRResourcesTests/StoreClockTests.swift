import Foundation
import ODRConfiguration
@testable import ODRResources
import Testing
@testable import ODRTrust

/// One clock for a store: the uses and leases it records are dated by the
/// clock it was opened with (a catalog's store gets its trust policy's,
/// which a command's context sets), not by the process's.
@Suite struct StoreClockTests {
  let cache = FileManager.default.temporaryDirectory.appending(path: "odr-clock-\(UUID().uuidString)")
  static let then = Date(timeIntervalSince1970: 4_102_444_800)  // 2100-01-01

  @Test func usesAndLeasesAreDatedByTheStoresClock() async throws {
    defer { try? FileManager.default.removeItem(at: cache) }
    let store = try LocalStore(bundle: "com.example.clock", cacheHome: cache, now: { Self.then })
    try await store.usage.touch(["Maps"])
    #expect(try store.usage.lastUse(of: "Maps") == Self.then.timeIntervalSince1970)
    try await store.pins.pin(["Maps"], owner: getpid())
    try store.pins.pinNow(["Intro"], owner: getpid())
    #expect(try store.pins.leases().map(\.since) == [Self.then.timeIntervalSince1970, Self.then.timeIntervalSince1970])
  }

  @Test func aConfigurationsTrustPolicyKeepsTheClockItWasGiven() throws {
    let configuration = try ODRConfiguration.discover(environment: ["HOME": cache.path], folder: cache, now: { Self.then })
    #expect(configuration.trust.now() == Self.then)
  }
}
