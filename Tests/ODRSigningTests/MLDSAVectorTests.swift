import Crypto
import Foundation
import ODRTesting
import ODRSigning
import Testing

/// Wycheproof's ML-DSA-65 verification vectors (Tests/Vectors/wycheproof,
/// Apache-2.0): every case gets the verdict the file gives — through
/// swift-crypto's MLDSA65 with the case's context, and, for the cases
/// without one, through odr's own hybrid key (the case's ML-DSA key beside
/// an Ed25519 key, its signature after a valid Ed25519 one). So a future
/// swift-crypto cannot change a verdict of ours without a test failing.
@Suite(.enabled(if: TestSelection.untagged)) struct MLDSAVectorTests {
  struct Case: Sendable, CustomTestStringConvertible {
    let id: Int, comment: String, publicKey: [UInt8], message: [UInt8], context: [UInt8]?, signature: [UInt8], valid: Bool
    var testDescription: String { "tcId \(id): \(comment)" }
  }

  static let cases: [Case] = {
    let url = Paths.packageRoot.appending(path: "Tests/Vectors/wycheproof/mldsa_65_verify_test.json")
    // The vendored file is part of the checkout: a missing one fails every case below.
    guard let data = try? Data(contentsOf: url), let file = try? JSONSerialization.jsonObject(with: data) as? [String: Any],
          let groups = file["testGroups"] as? [[String: Any]] else { return [] }
    return groups.flatMap { group in
      let publicKey = hex(group["publicKey"] as? String ?? "")
      return (group["tests"] as? [[String: Any]] ?? []).map { test in
        Case(id: test["tcId"] as? Int ?? 0, comment: test["comment"] as? String ?? "", publicKey: publicKey,
             message: hex(test["msg"] as? String ?? ""), context: (test["ctx"] as? String).map(hex),
             signature: hex(test["sig"] as? String ?? ""), valid: test["result"] as? String == "valid")
      }
    }
  }()

  static func hex(_ text: String) -> [UInt8] {
    var bytes: [UInt8] = []
    var index = text.startIndex
    while index < text.endIndex, let next = text.index(index, offsetBy: 2, limitedBy: text.endIndex) {
      bytes.append(UInt8(text[index..<next], radix: 16) ?? 0)
      index = next
    }
    return bytes
  }

  @Test func theFileHoldsEveryCase() {
    #expect(Self.cases.count == 83)
    #expect(Self.cases.filter(\.valid).count == 65)
  }

  @Test(arguments: cases) func swiftCryptoGivesTheVerdict(_ vector: Case) {
    guard let key = try? MLDSA65.PublicKey(rawRepresentation: vector.publicKey) else {
      #expect(!vector.valid, "a valid case's public key does not parse")
      return
    }
    let verdict = vector.context.map { key.isValidSignature(vector.signature, for: vector.message, context: $0) }
      ?? key.isValidSignature(vector.signature, for: vector.message)
    #expect(verdict == vector.valid)
  }

  static let ed25519 = Curve25519.Signing.PrivateKey()

  @Test(arguments: cases.filter { $0.context == nil || $0.context == [] })
  func odrsHybridKeyGivesTheVerdict(_ vector: Case) throws {
    let text = "ed25519-mldsa65:" + Data(Self.ed25519.publicKey.rawRepresentation + vector.publicKey).base64EncodedString()
    guard let key = try? VerifyingKey(text) else {
      #expect(!vector.valid, "odr refuses a valid case's public key")
      return
    }
    let classic = Array(try Self.ed25519.signature(for: vector.message))
    #expect(key.isValidSignature(classic + vector.signature, for: Data(vector.message)) == vector.valid)
  }
}
