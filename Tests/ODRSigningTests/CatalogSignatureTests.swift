import Foundation
import ODRTesting
import ODRSigning
import Testing

@Suite(.enabled(if: TestSelection.untagged), .timeLimit(.minutes(1))) struct CatalogSignatureTests {
  let catalog = Data(#"{"bundle": "com.example.demo", "version": 3}"#.utf8)

  @Test func aSignatureVerifiesUnderItsKeyOnly() throws {
    let key = SigningKey(), other = SigningKey()
    let signature = try CatalogSignature(parsing: try CatalogSignature(signing: catalog, with: key).encoded)
    #expect(signature.validSigner(of: catalog, among: [key.verifyingKey]) == key.verifyingKey)
    #expect(signature.validSigner(of: catalog, among: [other.verifyingKey]) == nil)
  }

  @Test func everyFlippedByteOfTheCatalogIsCaught() throws {
    let key = SigningKey()
    let signature = try CatalogSignature(signing: catalog, with: key)
    for index in catalog.indices {
      var tampered = catalog
      tampered[index] ^= 0x01
      #expect(signature.validSigner(of: tampered, among: [key.verifyingKey]) == nil)
    }
  }

  @Test func everyFlippedByteOfTheSignatureIsCaught() throws {
    let key = SigningKey()
    let file = try CatalogSignature(signing: catalog, with: key).encoded
    for index in file.indices {
      var tampered = file
      tampered[index] ^= 0x01
      let parsed = try? CatalogSignature(parsing: tampered)
      #expect(parsed?.validSigner(of: catalog, among: [key.verifyingKey]) == nil)
    }
  }

  @Test func keysRoundTripThroughTheirTextForms() throws {
    let key = SigningKey()
    #expect(try SigningKey(key.secretKeyString + "\n").verifyingKey == key.verifyingKey)
    #expect(try VerifyingKey(key.verifyingKey.description) == key.verifyingKey)
    #expect(!"\(key)".contains(key.secretKeyString))
    #expect(throws: TrustError.self) { try VerifyingKey("ed25519:AAAA") }
    #expect(throws: TrustError.self) { try SigningKey("ed25519:" + key.secretKeyString.dropFirst(15)) }
    #expect(throws: TrustError.self) { try CatalogSignature(parsing: Data(repeating: 0x41, count: 1025)) }
  }
}
