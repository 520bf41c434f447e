import Foundation
import ODRTesting
import ODRSigning
import Testing

/// odr's hybrid signatures (Ed25519 + ML-DSA-65) against an independent
/// implementation, both ways: pyca/cryptography, through the test-side
/// Tests/Peers/hybrid_sig.py, checks lines and hand-over statements odr
/// wrote over the documented messages, and odr checks lines and statements
/// a key pyca made wrote — and refuses them changed.
@Suite(.enabled(if: TestSelection.untagged), .timeLimit(.minutes(2))) struct HybridSignatureInteropTests {
  let root = FileManager.default.temporaryDirectory.appending(path: "odr-hybrid-\(UUID().uuidString)")
  static let peer = Paths.packageRoot.appending(path: "Tests/Peers/hybrid_sig.py").path
  static let bundle = "com.example.demo"
  let catalog = Data(#"{"bundle":"com.example.demo","formatVersion":3,"tags":{},"version":4}"#.utf8)

  init() throws {
    try FileManager.default.createDirectory(at: root, withIntermediateDirectories: true)
  }

  /// Runs the pyca peer on `message`: `sign` → (key, signature), or
  /// `verify` → whether it verifies.
  func peer(_ command: String, _ message: Data, _ rest: [String] = []) async throws -> Command.Result {
    let file = root.appending(path: UUID().uuidString)
    try message.write(to: file)
    return try await Command.run("/usr/bin/env", ["python3", Self.peer, command, file.path] + rest)
  }

  func pycaVerifies(_ message: Data, key: VerifyingKey, signature: [UInt8]) async throws -> Bool {
    let result = try await peer("verify", message, [key.description, Data(signature).base64EncodedString()])
    try #require(result.status == 0 || result.status == 1, "\(result.stderr)")
    return result.status == 0
  }

  @Test func pycaVerifiesWhatOdrSigns() async throws {
    defer { try? FileManager.default.removeItem(at: root) }
    let key = try SigningKey(postQuantum: true)
    let line = try #require(try CatalogSignature(signing: catalog, with: key).entries.first)
    let message = Data("odr-catalog-v3\n".utf8) + catalog
    #expect(try await pycaVerifies(message, key: line.key, signature: line.signature))
    // The peer can fail: another message, a flipped byte of either half.
    #expect(try await !pycaVerifies(Data("odr-catalog-v2\n".utf8) + catalog, key: line.key, signature: line.signature))
    for index in [5, 64 + 2_000] {
      var flipped = line.signature
      flipped[index] ^= 1
      #expect(try await !pycaVerifies(message, key: line.key, signature: flipped))
    }
    // A hand-over statement by the hybrid key, over its documented message.
    let next = try SigningKey(postQuantum: true).verifyingKey
    let statement = try Handover(bundle: Self.bundle, version: 5, signers: [next], signedWith: key)
    let statementMessage = Data("odr-handover-v2\n\(Self.bundle)\n5\n\(next)\n".utf8)
    #expect(try await pycaVerifies(statementMessage, key: key.verifyingKey, signature: Array(try #require(Data(base64Encoded: statement.signature)))))
  }

  @Test func odrVerifiesWhatPycaSigns() async throws {
    defer { try? FileManager.default.removeItem(at: root) }
    let signed = try await peer("sign", Data("odr-catalog-v3\n".utf8) + catalog)
    try #require(signed.status == 0, "\(signed.stderr)")
    let line = signed.stdout.trimmingCharacters(in: .whitespacesAndNewlines)
    let parts = line.split(separator: " ").map(String.init)
    let key = try VerifyingKey(parts[0])
    #expect(key.isPostQuantum)
    let file = try CatalogSignature(parsing: Data((line + "\n").utf8))
    #expect(file.signers(of: catalog, format: 3) == [key])
    #expect(file.signers(of: catalog, format: 2).isEmpty)
    // Changed: a flipped byte or a truncation of either half, or a half swapped with another pyca key's.
    let other = try await peer("sign", Data("odr-catalog-v3\n".utf8) + catalog)
    let theirs = try #require(Data(base64Encoded: String(other.stdout.split(separator: " ")[1]).trimmingCharacters(in: .whitespacesAndNewlines)))
    let mine = Array(try #require(Data(base64Encoded: parts[1])))
    let changes: [[UInt8]] = [
      { var s = mine; s[3] ^= 1; return s }(), { var s = mine; s[64 + 9] ^= 1; return s }(),
      Array(mine[..<63] + mine[64...]), Array(mine.dropLast()),
      Array(theirs[..<64] + mine[64...]), Array(mine[..<64] + theirs[64...]),
    ]
    for signature in changes {
      var changed = file
      changed.entries = [(key, signature)]
      #expect(changed.signers(of: catalog, format: 3).isEmpty)
    }
    // A hand-over statement pyca's key made, in the catalog's chain.
    let next = try SigningKey(postQuantum: true).verifyingKey
    let statement = try await peer("sign", Data("odr-handover-v2\n\(Self.bundle)\n7\n\(next)\n".utf8))
    let signer = statement.stdout.split(separator: " ").map { $0.trimmingCharacters(in: .whitespacesAndNewlines) }
    var handover = Handover(version: 7, signers: [next], signedBy: try VerifyingKey(signer[0]), signature: signer[1])
    #expect(handover.verifies(bundle: Self.bundle))
    handover.version = 8
    #expect(!handover.verifies(bundle: Self.bundle))
  }
}
