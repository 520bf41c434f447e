import Foundation
@testable import ODRCatalog
import Testing


/// StateFile at its own level: an update that leaves the value as it was
/// writes nothing (no rename, no fsync); one that changes it replaces the
/// file.
@Suite struct StateFileTests {
  let root = FileManager.default.temporaryDirectory.appending(path: "odr-state-\(UUID().uuidString)")

  func inode(_ url: URL) throws -> Int {
    try #require(FileManager.default.attributesOfItem(atPath: url.path)[.systemFileNumber] as? Int)
  }

  @Test func anUnchangedValueIsNotRewritten() async throws {
    defer { try? FileManager.default.removeItem(at: root) }
    let file = StateFile<[String: Int]>(url: root.appending(path: "state.json"), what: "a test state", reset: "delete it")
    try await file.update { $0 = ["a": 1, "b": 2] }
    let first = try inode(file.url)
    try await file.update { _ in }
    try await file.update { $0 = ["b": 2, "a": 1] }
    #expect(try inode(file.url) == first)
    try await file.update { $0?["a"] = 3 }
    #expect(try inode(file.url) != first)
    #expect(try file.read() == ["a": 3, "b": 2])
  }
}
