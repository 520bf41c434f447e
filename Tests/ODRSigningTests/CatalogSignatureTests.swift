import Foundation
import ODRTesting
import ODRSigning
import Testing

@Suite(.enabled(if: TestSelection.untagged), .timeLimit(.minutes(1))) struct CatalogSignatureTests {
  let catalog = Data(#"{"bundle": "com.example.demo", "version": 3}"#.utf8)
  static let hybrid = try! SigningKey(postQuantum: true), otherHybrid = try! SigningKey(postQuantum: true)

  @Test func aSignatureVerifiesUnderItsKeyOnly() throws {
    let key = SigningKey(), other = SigningKey()
    let signature = try CatalogSignature(parsing: try CatalogSignature(signing: catalog, with: key).encoded)
    #expect(signature.signers(of: catalog, format: 2) == [key.verifyingKey])
    #expect(!signature.signers(of: catalog, format: 2).contains(other.verifyingKey))
  }

  /// Each format has its own form, and a line verifies in one only; a
  /// hybrid line only in format 3, and only if both its halves verify.
  @Test func eachFormatHasItsOwnForm() throws {
    let classic = SigningKey()
    let file = try CatalogSignature(signing: catalog, with: [classic, Self.hybrid], format: 3)
    #expect(file.signers(of: catalog, format: 3) == [classic.verifyingKey, Self.hybrid.verifyingKey])
    #expect(file.signers(of: catalog, format: 2).isEmpty)
    #expect(file.verifiedLines(of: catalog).map(\.format) == [3, 3])
    let two = try CatalogSignature(signing: catalog, with: classic)
    #expect(two.verifiedLines(of: catalog).map(\.format) == [2])
    #expect(two.signers(of: catalog, format: 3).isEmpty)
    let one = try CatalogSignature(signing: catalog, with: [classic], format: 1)
    #expect(one.verifiedLines(of: catalog).map(\.format) == [1])
    #expect(CatalogSignature.format(signedBy: [classic]) == 2)
    #expect(CatalogSignature.format(signedBy: [classic, Self.hybrid]) == 3)
    // A hybrid key's two signatures over the format-2 form: refused, a hybrid line is format 3's.
    var stale = file
    stale.entries[1].signature = try Self.hybrid.signature(for: Data(CatalogSignature.domain.utf8) + catalog)
    #expect(stale.signers(of: catalog, format: 2).isEmpty && stale.signers(of: catalog, format: 3) == [classic.verifyingKey])
  }

  /// The hybrid signature is Ed25519 ‖ ML-DSA-65: flipping a byte of either
  /// half, truncating either, or swapping a half with another key's is refused.
  @Test(arguments: ["flip Ed25519", "flip ML-DSA", "truncate Ed25519", "truncate ML-DSA", "swap Ed25519", "swap ML-DSA", "Ed25519 half alone"])
  func aHybridLineNeedsBothHalves(_ change: String) throws {
    let message = Data(CatalogSignature.postQuantumDomain.utf8) + catalog
    let mine = try Self.hybrid.signature(for: message), theirs = try Self.otherHybrid.signature(for: message)
    var key = Self.hybrid.verifyingKey
    var signature = mine
    switch change {
    case "flip Ed25519": signature[10] ^= 1
    case "flip ML-DSA": signature[64 + 1_000] ^= 1
    case "truncate Ed25519": signature.remove(at: 63)
    case "truncate ML-DSA": signature.removeLast()
    case "swap Ed25519": signature = Array(theirs[..<64] + mine[64...])
    case "swap ML-DSA": signature = Array(mine[..<64] + theirs[64...])
    default: key = Self.hybrid.verifyingKey.classicHalf; signature = Array(mine[..<64])
    }
    #expect(Self.hybrid.verifyingKey.isValidSignature(mine, for: message))
    var file = try CatalogSignature(signing: catalog, with: Self.hybrid)
    file.entries = [(key, signature)]
    let parsed = try? CatalogSignature(parsing: file.encoded)
    #expect(parsed?.signers(of: catalog, format: 3).contains(Self.hybrid.verifyingKey) != true, "\(change)")
  }

  @Test func everyFlippedByteOfTheCatalogIsCaught() throws {
    let key = SigningKey()
    let signature = try CatalogSignature(signing: catalog, with: [key, Self.hybrid], format: 3)
    for index in catalog.indices {
      var tampered = catalog
      tampered[index] ^= 0x01
      #expect(signature.verifiedLines(of: tampered).isEmpty)
    }
  }

  @Test func everyFlippedByteOfTheSignatureIsCaught() throws {
    let key = SigningKey()
    let file = try CatalogSignature(signing: catalog, with: key).encoded
    for index in file.indices {
      var tampered = file
      tampered[index] ^= 0x01
      let parsed = try? CatalogSignature(parsing: tampered)
      #expect(parsed?.signers(of: catalog, format: 2).isEmpty ?? true)
    }
  }

  @Test func keysRoundTripThroughTheirTextForms() throws {
    for key in [SigningKey(), Self.hybrid] {
      #expect(try SigningKey(key.secretKeyString + "\n").verifyingKey == key.verifyingKey)
      #expect(try VerifyingKey(key.verifyingKey.description) == key.verifyingKey)
      #expect(!"\(key)".contains(key.secretKeyString))
    }
    #expect(Self.hybrid.secretKeyString.hasPrefix("ed25519-mldsa65-secret:"))
    #expect(Self.hybrid.verifyingKey.description.count == 16 + 2_648)
    #expect(Self.hybrid.verifyingKey.classicHalf == Self.hybrid.classicHalf.verifyingKey)
    #expect(Self.hybrid.verifyingKey.classicHalf != Self.hybrid.verifyingKey)
    #expect(Self.hybrid.verifyingKey.shortDescription.count < 60)
    // A forger's twin (the same Ed25519 half, an ML-DSA half of its own) is named differently.
    let twin = VerifyingKey(raw: Self.hybrid.verifyingKey.raw, postQuantumRaw: Self.otherHybrid.verifyingKey.postQuantumRaw)
    #expect(twin.shortDescription != Self.hybrid.verifyingKey.shortDescription)
    #expect(throws: TrustError.self) { try VerifyingKey("ed25519:AAAA") }
    #expect(throws: TrustError.self) { try VerifyingKey("ed25519-mldsa65:" + Self.hybrid.verifyingKey.description.dropFirst(16).dropLast(4) + "AAA=") }
    // The Ed25519 half alone under the hybrid prefix is not a key, nor the hybrid key under the Ed25519 one.
    #expect(throws: TrustError.self) { try VerifyingKey("ed25519-mldsa65:" + Self.hybrid.verifyingKey.classicHalf.description.dropFirst(8)) }
    #expect(throws: TrustError.self) { try VerifyingKey("ed25519:" + Self.hybrid.verifyingKey.description.dropFirst(16)) }
    #expect(throws: TrustError.self) { try SigningKey("ed25519:" + SigningKey().secretKeyString.dropFirst(15)) }
    #expect(throws: TrustError.self) { try SigningKey("ed25519-mldsa65-secret:" + SigningKey().secretKeyString.dropFirst(15)) }
  }

  /// The file's bound holds four hybrid lines and a few Ed25519 ones, no more.
  @Test func theSizeBoundFitsAFewHybridLines() throws {
    let keys = try [SigningKey(), SigningKey()] + (0..<4).map { _ in try SigningKey(postQuantum: true) }
    let file = try CatalogSignature(signing: catalog, with: keys, format: 3).encoded
    #expect(file.count <= CatalogSignature.maxBytes)
    #expect(try CatalogSignature(parsing: file).signers(of: catalog, format: 3).count == 6)
    let five = try CatalogSignature(signing: catalog, with: keys + [try SigningKey(postQuantum: true)], format: 3).encoded
    #expect(five.count > CatalogSignature.maxBytes)
    #expect(throws: TrustError.self) { try CatalogSignature(parsing: five) }
  }
}
