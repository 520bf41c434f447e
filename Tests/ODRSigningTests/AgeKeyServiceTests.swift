import Crypto
import Foundation
import ODRAge
import ODRBase
import ODRSigning
import ODRTesting
import Synchronization
import Testing

/// AWS KMS recipients in the age format (`awskms:ARN`, `-> odr-awskms ARN`
/// stanzas), with an in-memory key service standing in for KMS: it seals
/// the file key with AES-GCM and the context as associated data, so a
/// context that differs does not open, as KMS's. KMS itself: KMSRecipientTests.
@Suite(.enabled(if: TestSelection.untagged), .timeLimit(.minutes(1))) struct AgeKeyServiceTests {
  static let arn = "arn:aws:kms:us-east-1:123456789012:key/1234abcd-12ab-34cd-56ef-1234567890ab"
  let context = ["odr:bundle": "com.example.demo", "odr:tag": "APIKeys"]

  struct Refused: Error {}

  /// KMS, as far as the age layer can tell.
  final class MemoryKMS: KeyWrapService {
    let key = SymmetricKey(size: .bits256)
    let calls = Mutex(0)

    func wrap(_ secret: [UInt8], key arn: String, context: [String: String]) async throws -> [UInt8] {
      calls.withLock { $0 += 1 }
      return Array(try AES.GCM.seal(secret, using: key, authenticating: Self.aad(arn, context)).combined!)
    }

    func unwrap(_ blob: [UInt8], key arn: String, context: [String: String]) async throws -> [UInt8] {
      calls.withLock { $0 += 1 }
      do { return Array(try AES.GCM.open(AES.GCM.SealedBox(combined: blob), using: key, authenticating: Self.aad(arn, context))) } catch {
        throw Refused()
      }
    }

    static func aad(_ arn: String, _ context: [String: String]) -> Data {
      Data((arn + context.sorted { $0.key < $1.key }.map { "\n\($0.key)=\($0.value)" }.joined()).utf8)
    }
  }

  @Test func anAWSKMSRecipientIsParsedFromItsARNAndSaidBack() throws {
    let recipient = try AgeRecipient("  awskms:\(Self.arn) ")
    #expect(recipient.description == "awskms:\(Self.arn)" && recipient.isKeyService && !recipient.isPostQuantum)
    for bad in ["awskms:", "awskms:alias/odr", "awskms:1234abcd-12ab-34cd-56ef-1234567890ab", "awskms:arn:aws:kms:us-east-1:1:key/x"] {
      #expect { try AgeRecipient(bad) } throws: { ($0 as? TrustError)?.message.contains("the ARN of a key or alias") == true }
    }
    let file = "# CI\nawskms:\(Self.arn)   # the CI key\n\(AgeIdentity().recipient)\n"
    let parsed = try AgeRecipient.parseFile(file).recipients
    #expect(parsed.map(\.description).first == "awskms:\(Self.arn)" && parsed.count == 2)
  }

  @Test func aFileEncryptedToKMSAndX25519OpensEitherWayAndOnlyInItsContext() async throws {
    let kms = MemoryKMS()
    let identity = AgeIdentity()
    let plaintext = Data("the keys".utf8)
    let file = try await Age.encrypt(plaintext, to: [try AgeRecipient("awskms:\(Self.arn)"), identity.recipient], keyService: kms, context: context)
    #expect(Age.keyServiceRecipients(of: file) == [Self.arn])
    // The identity alone, without asking the service.
    #expect(try Age.decrypt(file, identities: [identity]) == plaintext)
    let before = kms.calls.withLock { $0 }
    #expect(try await Age.decrypt(file, identities: [identity], keyService: kms, context: context) == plaintext)
    #expect(kms.calls.withLock { $0 } == before, "an identity that opens the file spares the key service")
    // The service alone.
    #expect(try await Age.decrypt(file, identities: [AgeIdentity()], keyService: kms, context: context) == plaintext)
    // Another context: the service's refusal is what is thrown.
    await #expect(throws: Refused.self) {
      try await Age.decrypt(file, identities: [], keyService: kms, context: ["odr:bundle": "com.example.other", "odr:tag": "APIKeys"])
    }
    // No service: not a recipient, as before.
    #expect { try Age.decrypt(file, identities: [AgeIdentity()]) } throws: { ($0 as? TrustError)?.code == .noIdentity }
  }

  @Test func aKMSRecipientJoinsEitherKindOfPackButPostQuantumStillDoesNotMixWithClassic() async throws {
    let kms = MemoryKMS()
    let pq = try AgeIdentity(postQuantum: true)
    let withPQ = try await Age.encrypt(Data("pq".utf8), to: [pq.recipient, try AgeRecipient("awskms:\(Self.arn)")], keyService: kms, context: context)
    #expect(try Age.decrypt(withPQ, identities: [pq]) == Data("pq".utf8))
    await #expect {
      try await Age.encrypt(Data(), to: [pq.recipient, AgeIdentity().recipient, try AgeRecipient("awskms:\(Self.arn)")], keyService: kms, context: context)
    } throws: { ($0 as? TrustError)?.message.contains("1 of the 2 age recipients are post-quantum") == true }
    // A KMS recipient with no service to wrap with is refused, not skipped.
    await #expect { try await Age.encrypt(Data(), to: [try AgeRecipient("awskms:\(Self.arn)")], keyService: nil, context: context) } throws: {
      ($0 as? TrustError)?.message.contains("needs AWS credentials") == true
    }
    #expect(throws: TrustError.self) { try Age.encrypt(Data(), to: [try AgeRecipient("awskms:\(Self.arn)")]) }
  }

  @Test(arguments: [
    ("-> odr-awskms\nAAAA\n", "argument is not one KMS key ARN"),
    ("-> odr-awskms \(arn) extra\nAAAA\n", "argument is not one KMS key ARN"),
    ("-> odr-awskms arn:aws:kms:us-east-1:1:key/x\nAAAA\n", "argument is not one KMS key ARN"),
    ("-> odr-awskms \(arn)\n\n", "body is 0 bytes"),
  ])
  func aMalformedKMSStanzaIsAMalformedHeader(stanza: String, says: String) {
    let file = Data("age-encryption.org/v1\n\(stanza)--- \(Base64.unpadded([UInt8](repeating: 0, count: 32)))\n".utf8) + Data(count: 32)
    #expect { try Age.decrypt(file, identities: [AgeIdentity()]) } throws: { error in
      (error as? TrustError)?.code == .ageHeader && (error as? TrustError)?.message.contains(says) == true
    }
  }

  /// Stock age skips a stanza type it does not know: a file to KMS and an
  /// X25519 recipient opens with age and the identity; to KMS alone, age
  /// reports no matching identity (docs/ci.md says so).
  @Test func stockAgeSkipsTheKMSStanza() async throws {
    let root = FileManager.default.temporaryDirectory.appending(path: "odr-age-kms-\(UUID().uuidString)")
    try FileManager.default.createDirectory(at: root, withIntermediateDirectories: true)
    defer { try? FileManager.default.removeItem(at: root) }
    let identity = AgeIdentity()
    let identityFile = root.appending(path: "identity.txt")
    try Data(identity.fileText.utf8).write(to: identityFile)
    let kms = MemoryKMS()
    let both = root.appending(path: "both.age"), alone = root.appending(path: "alone.age")
    try await Age.encrypt(Data("skipped".utf8), to: [try AgeRecipient("awskms:\(Self.arn)"), identity.recipient], keyService: kms, context: context).write(to: both)
    try await Age.encrypt(Data("skipped".utf8), to: [try AgeRecipient("awskms:\(Self.arn)")], keyService: kms, context: context).write(to: alone)
    let opened = try await Command.run("/usr/bin/age", ["-d", "-i", identityFile.path, both.path])
    #expect(opened.status == 0 && opened.stdout == "skipped", "\(opened.stderr)")
    let refused = try await Command.run("/usr/bin/age", ["-d", "-i", identityFile.path, alone.path])
    #expect(refused.status != 0 && refused.stderr.contains("no identity matched any of the recipients"), "\(refused.stderr)")
  }
}
