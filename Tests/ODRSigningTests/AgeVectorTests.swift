import ODRBase
import Crypto
import Foundation
import ODRAge
import ODRTesting
import ODRSigning
import Testing

/// Every C2SP/CCTV age test vector (Tests/Vectors/age, 0BSD/CC0/Unlicense)
/// decrypts with its expected outcome: the payload's SHA-256 on success,
/// or the failure class age expects, each a distinct TrustError code.
@Suite(.enabled(if: TestSelection.untagged)) struct AgeVectorTests {
  static let folder = Paths.packageRoot.appending(path: "Tests/Vectors/age")

  struct Vector {
    var name: String
    var fields: [(key: String, value: String)] = []
    var body = Data()

    func values(_ key: String) -> [String] { fields.filter { $0.key == key }.map(\.value) }
    func value(_ key: String) -> String? { values(key).first }
  }

  static func vectors() throws -> [Vector] {
    let names = try FileManager.default.contentsOfDirectory(atPath: folder.path).filter { !$0.hasPrefix("README") && !$0.hasPrefix("LICENSE") }
    return try names.sorted().map { name in
      let bytes = try Data(contentsOf: folder.appending(path: name))
      let split = try #require(bytes.range(of: Data("\n\n".utf8)), "\(name) has no blank line after its fields")
      var vector = Vector(name: name)
      for line in String(decoding: bytes[..<split.lowerBound], as: UTF8.self).split(separator: "\n") {
        let parts = line.split(separator: ":", maxSplits: 1)
        vector.fields.append((String(parts[0]), parts[1].trimmingCharacters(in: .whitespaces)))
      }
      vector.body = Data(bytes[split.upperBound...])
      return vector
    }
  }

  /// zlib-inflates each of `bodies` with Python's zlib (the test's own
  /// decoder, not odr's), all in one run.
  static func inflate(_ bodies: [Data]) async throws -> [Data] {
    let directory = FileManager.default.temporaryDirectory.appending(path: "odr-vectors-\(UUID().uuidString)")
    try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
    defer { try? FileManager.default.removeItem(at: directory) }
    let inputs = bodies.indices.map { directory.appending(path: "\($0)") }
    for (body, input) in zip(bodies, inputs) { try body.write(to: input) }
    let script = "import sys, zlib\nfor p in sys.argv[1:]: open(p + '.out', 'wb').write(zlib.decompress(open(p, 'rb').read()))"
    let result = try await Command.run("/usr/bin/python3", ["-c", script] + inputs.map(\.path))
    try #require(result.status == 0, "\(result.stderr)")
    return try inputs.map { try Data(contentsOf: URL(filePath: $0.path + ".out")) }
  }

  /// Whether the file's header holds a stanza of exactly type `scrypt`
  /// (armor undone with Foundation's base64, independently of odr).
  static func hasScryptStanza(_ body: Data, armored: Bool) -> Bool {
    var bytes = body
    if armored {
      let lines = String(decoding: body, as: UTF8.self).split(whereSeparator: \.isNewline).map { $0.trimmingCharacters(in: .whitespaces) }
      bytes = Data(base64Encoded: lines.filter { !$0.hasPrefix("-----") }.joined()) ?? Data()
    }
    return bytes.range(of: Data("\n-> scrypt ".utf8)) != nil
  }

  /// The outcome odr must give: age's, except that a passphrase file that
  /// age would open (or fail to match) is refused as a passphrase file,
  /// since odr has no passphrase identities.
  static func expected(_ vector: Vector) -> TrustError.Code? {
    let expect = vector.value("expect") ?? ""
    if !vector.values("passphrase").isEmpty, expect == "success" || expect == "no match",
       hasScryptStanza(vector.body, armored: vector.value("armored") == "yes") {
      return .agePassphrase
    }
    switch expect {
    case "success": return nil
    case "no match": return .noIdentity
    case "HMAC failure": return .ageHeaderMAC
    case "header failure": return .ageHeader
    case "payload failure": return .agePayload
    case "armor failure": return .ageArmor
    default: return TrustError.Code.invalidKey  // unknown expectation: fails below
    }
  }

  @Test func everyVectorHasItsOutcome() async throws {
    var vectors = try Self.vectors()
    #expect(vectors.count == 143)
    let compressed = vectors.indices.filter { vectors[$0].value("compressed") == "zlib" }
    for (index, body) in zip(compressed, try await Self.inflate(compressed.map { vectors[$0].body })) { vectors[index].body = body }
    var passed: [String: Int] = [:], total: [String: Int] = [:]
    for vector in vectors {
      let body = vector.body
      let identities = try vector.values("identity").map { try AgeIdentity($0) }
      let expected = Self.expected(vector)
      let label = expected?.rawValue ?? "success"
      total[label, default: 0] += 1
      do {
        let plaintext = try Age.decrypt(body, identities: identities)
        let hash = SHA256.hash(data: plaintext).map { String(format: "%02x", $0) }.joined()
        #expect(expected == nil, "\(vector.name): decrypted, expected \(label)")
        #expect(hash == vector.value("payload"), "\(vector.name): payload hash")
        if expected == nil && hash == vector.value("payload") { passed[label, default: 0] += 1 }
      } catch let error as TrustError {
        #expect(error.code == expected, "\(vector.name): \(error.code) (\(error.message)), expected \(label)")
        if error.code == expected { passed[label, default: 0] += 1 }
      }
    }
    print("age vectors: " + total.keys.sorted().map { "\($0) \(passed[$0, default: 0])/\(total[$0]!)" }.joined(separator: ", "))
  }
}
