import Foundation
import ODRBase
@testable import ODRCatalog
@testable import ODRPublishing
import ODRTesting
import ODRSigning
import Testing

/// The catalog's own reader against `JSONDecoder` with the synthesized
/// `Codable` conformance (the oracle): the same value for every catalog
/// odr writes, and never more lenient on thousands of damaged ones.
@Suite(.enabled(if: TestSelection.untagged)) struct CatalogReaderTests {
  static func oracle(_ data: Data) -> Catalog? {
    let decoder = JSONDecoder()
    decoder.dateDecodingStrategy = .iso8601
    return try? decoder.decode(Catalog.self, from: data)
  }

  /// Catalogs of every shape odr writes.
  static func samples() throws -> [Data] {
    let key = SigningKey(), next = SigningKey()
    let files = (0..<50).map { Catalog.File(path: "a/é \($0)\\\"q\".bin", size: Int64($0) * 1_000_003, sha256: String(repeating: "ab", count: 32)) }
    var full = Catalog(bundle: "com.example.reader", version: 7, expires: Date(timeIntervalSince1970: 1_900_000_000), signers: [key.verifyingKey, next.verifyingKey],
                       handovers: [try Handover(bundle: "com.example.reader", version: 5, signers: [next.verifyingKey], signedWith: key)],
                       tags: ["Secrets": .init(category: .prefetch, order: 2, preservationPriority: 0.25, secrets: true,
                                               encryption: .init(recipients: 3), files: Array(files.prefix(1))),
                              "Levels": .init(category: .onDemand, preservationPriority: 1, files: files),
                              "Empty": .init(category: .initial, files: [])])
    var plain = Catalog(bundle: "com.example.plain", version: 1, tags: ["T": .init(category: .initial, files: Array(files.prefix(3)))])
    plain.formatVersion = 1
    full.formatVersion = 2
    let demo = try Publisher(source: Paths.packageRoot.appending(path: "resources/Demo")).makeCatalog()
    return [full.encoded(), plain.encoded(), demo.encoded(),
            Data(#"{"formatVersion":1,"bundle":"b.c","version":1,"expires":null,"signers":null,"handovers":null,"tags":{},"extra":[1,{"x":true},null,-2.5e-3,"\u00e9\ud83d\ude00"]}"#.utf8)]
  }

  @Test func readsWhatTheDecoderReads() throws {
    for data in try Self.samples() {
      let read = try CatalogReader.read(data)
      #expect(read == Self.oracle(data), "\(String(decoding: data.prefix(120), as: UTF8.self))")
    }
  }

  @Test func isNeverMoreLenientThanTheDecoderOnDamagedCatalogs() throws {
    var generator = SeededGenerator(seed: 0x0d_12_23)
    var agreed = 0, stricter = 0
    for sample in try Self.samples() {
      let bytes = [UInt8](sample)
      for _ in 0..<1500 {
        var damaged = bytes
        let at = Int.random(in: 0..<damaged.count, using: &generator)
        switch Int.random(in: 0..<3, using: &generator) {
        case 0: damaged[at] = [UInt8](#"{}[]",:0123456789.eE-+\nultrfa "#.utf8).randomElement(using: &generator)!
        case 1: damaged.remove(at: at)
        default: damaged.insert([UInt8](#"{}[]",:09.e-\ "#.utf8).randomElement(using: &generator)!, at: at)
        }
        let data = Data(damaged)
        let expected = Self.oracle(data)
        switch Result(catching: { () throws(CatalogReader.Failure) -> Catalog in try CatalogReader.read(data) }) {
        case .success(let read):
          #expect(read == expected, "the reader accepted what the decoder reads differently: \(String(decoding: damaged, as: UTF8.self).prefix(300))")
          agreed += 1
        case .failure(let failure):
          if expected == nil { agreed += 1 } else {
            // Only the documented strictness: integers written otherwise, a
            // repeated key — or bytes that are not JSON at all, which
            // JSONDecoder lets through inside values it never decodes (an
            // unknown key's), as JSONSerialization's full parse shows.
            // (Foundation also takes a trailing comma, which RFC 8259 does not.)
            let notJSON = (try? JSONSerialization.jsonObject(with: data, options: [.fragmentsAllowed])) == nil
              || String(decoding: damaged, as: UTF8.self).contains(/,\s*[}\]]/)
            #expect(failure.message.hasPrefix("wrong type") || failure.message.contains("twice") || notJSON,
                    "\(failure.message): \(String(decoding: damaged, as: UTF8.self).prefix(300))")
            stricter += 1
          }
        }
      }
    }
    #expect(agreed > 5000)
    print("CatalogReader vs JSONDecoder: \(agreed) agreed, \(stricter) refused only by the stricter reader")
  }
}
