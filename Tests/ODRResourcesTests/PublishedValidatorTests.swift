import Foundation
@testable import ODRCatalog
import ODRPublishing
import ODRTesting
import Testing

/// A published catalog replaced within one second still gets a new HTTP
/// validator: its modification time moves on by a whole second, so nginx's
/// ETag and Last-Modified (second resolution) change with it.
@Suite(.enabled(if: TestSelection.untagged), .timeLimit(.minutes(1))) struct PublishedValidatorTests {
  let root = FileManager.default.temporaryDirectory.appending(path: "odr-validator-\(UUID().uuidString)")

  func seconds(_ url: URL) throws -> Int {
    let date = try #require(try FileManager.default.attributesOfItem(atPath: url.path)[.modificationDate] as? Date)
    return Int(date.timeIntervalSince1970.rounded(.down))
  }

  @Test func eachWriteMovesTheModificationTimeOnByASecondAtLeast() throws {
    defer { try? FileManager.default.removeItem(at: root) }
    try FileManager.default.createDirectory(at: root, withIntermediateDirectories: true)
    let file = root.appending(path: "catalog.json")
    var last: Int?
    for round in 0..<3 {  // well within one second: the rule, not the clock, moves it
      try FileIO.atomicWriteChangingValidator(Data("{\"v\": \(round)}".utf8), to: file)
      let now = try seconds(file)
      if let last { #expect(now >= last + 1) }
      last = now
    }
  }

  @Test func publishingToAFolderTwiceInASecondChangesNginxsValidators() async throws {
    defer { try? FileManager.default.removeItem(at: root) }
    let www = root.appending(path: "www")
    try FileManager.default.createDirectory(at: www, withIntermediateDirectories: true)
    let nginx = try await Nginx.start(root: www)
    defer { nginx.stop() }
    let destination = FolderDestination(www)
    var seen: [String] = []
    for round in 0..<2 {  // the same size each time: only the time tells them apart
      try await destination.upload(Data("{\"v\": \(round)}".utf8), to: "catalog.json", cacheControl: "no-cache")
      let head = try await Command.run("/usr/bin/curl", ["-sSI", nginx.url.appending(path: "catalog.json").absoluteString])
      let etag = head.stdout.split(separator: "\r\n").first { $0.lowercased().hasPrefix("etag:") }
      seen.append(String(etag ?? ""))
    }
    #expect(seen.count == 2 && !seen[0].isEmpty && seen[0] != seen[1], "\(seen)")
  }
}
