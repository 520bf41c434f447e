import ODRBase
import Foundation
import ODRAge
import ODRTesting
import ODRSigning
import Testing

/// odr's post-quantum, SSH (ed25519 and rsa) and X25519 recipients against
/// independent peers, both ways: pyca/cryptography's HPKE (through the
/// test-side Tests/Peers/age_pq.py), the stock `age` and pyrage.
@Suite(.enabled(if: TestSelection.untagged), .timeLimit(.minutes(3))) struct AgeRecipientKindsTests {
  let root = FileManager.default.temporaryDirectory.appending(path: "odr-age-kinds-\(UUID().uuidString)")
  static let peer = Paths.packageRoot.appending(path: "Tests/Peers/age_pq.py").path
  static let plaintext = Data((0..<150_000).map { UInt8(truncatingIfNeeded: $0 &* 13 &+ 5) })

  init() throws {
    try FileManager.default.createDirectory(at: root, withIntermediateDirectories: true)
  }

  func file(_ name: String, _ data: Data) throws -> URL {
    let url = root.appending(path: name)
    try data.write(to: url)
    return url
  }

  /// Runs python3 (the one on PATH, where scripts/bootstrap installs
  /// cryptography and pyrage) with `script`; files are passed as arguments.
  func python(_ script: String, _ arguments: [String]) async throws -> Command.Result {
    let result = try await Command.run("/usr/bin/env", ["python3", "-c", script] + arguments)
    try #require(result.status == 0, "\(result.stderr)")
    return result
  }

  /// The pyca peer: `keygen`, or `encrypt IN OUT RECIPIENT` / `decrypt IN OUT IDENTITY`.
  func pyca(_ arguments: [String]) async throws -> Command.Result {
    let result = try await Command.run("/usr/bin/env", ["python3", Self.peer] + arguments)
    try #require(result.status == 0, "\(result.stderr)")
    return result
  }

  /// An SSH key made by ssh-keygen (`ed25519`, or `rsa` of `bits`): the
  /// private key file and the public line.
  func sshKeygen(_ type: String = "ed25519", bits: Int = 2048) async throws -> (file: URL, publicLine: String) {
    let key = root.appending(path: "id_\(type)-\(UUID().uuidString)")
    let made = try await Command.run("/usr/bin/ssh-keygen", ["-q", "-t", type, "-b", "\(bits)", "-N", "", "-C", "odr test", "-f", key.path])
    try #require(made.status == 0, "\(made.stderr)")
    return (key, try String(contentsOf: key.appendingPathExtension("pub"), encoding: .utf8))
  }

  @Test func postQuantumInteroperatesWithPyca() async throws {
    defer { try? FileManager.default.removeItem(at: root) }
    // pyca → odr: an identity pyca made, a file pyca encrypted to it.
    let keys = try await pyca(["keygen"])
    let lines = keys.stdout.split(separator: "\n").map(String.init)
    let theirs = try AgeIdentity(lines[0])
    #expect(theirs.isPostQuantum && theirs.recipient.description == lines[1])
    let plain = try file("plain", Self.plaintext), sealed = root.appending(path: "sealed.age")
    _ = try await pyca(["encrypt", plain.path, sealed.path, lines[1]])
    #expect(try Age.decrypt(Data(contentsOf: sealed), identities: [theirs]) == Self.plaintext)
    // odr → pyca: an odr identity, a file odr encrypted to it and to pyca's.
    let mine = try AgeIdentity(postQuantum: true)
    let ours = try file("ours.age", try Age.encrypt(Self.plaintext, to: [mine.recipient, theirs.recipient]))
    let opened = root.appending(path: "opened")
    _ = try await pyca(["decrypt", ours.path, opened.path, mine.secretKeyString])
    #expect(try Data(contentsOf: opened) == Self.plaintext)
    // The header holds one ~1.6 KiB stanza per recipient, as the spec says.
    let sealedBytes = try Data(contentsOf: ours)
    let size = try #require(sealedBytes.range(of: Data("\n--- ".utf8))).lowerBound
    #expect((2 * 1_500...2 * 1_700).contains(size))
  }

  @Test func aPackMayNotMixPostQuantumAndClassicRecipients() throws {
    let error = #expect(throws: TrustError.self) {
      try Age.encrypt(Data("x".utf8), to: [try AgeIdentity(postQuantum: true).recipient, AgeIdentity().recipient])
    }
    #expect(error?.code == .invalidKey && error?.message.contains("gives up the post-quantum protection") == true)
  }

  @Test(arguments: ["ed25519", "rsa"]) func sshKeysInteroperateWithAgeAndPyrage(type: String) async throws {
    defer { try? FileManager.default.removeItem(at: root) }
    let (key, publicLine) = try await sshKeygen(type)
    let recipient = try AgeRecipient(publicLine)
    let identities = try AgeIdentity.parseFile(try String(contentsOf: key, encoding: .utf8))
    #expect(identities.map(\.recipient) == [recipient])
    // odr → age and pyrage.
    let ours = try file("ours.age", try Age.encrypt(Self.plaintext, to: [recipient]))
    let opened = root.appending(path: "opened")
    let age = try await Command.run("/usr/bin/age", ["-d", "-i", key.path, "-o", opened.path, ours.path])
    #expect(age.status == 0, "\(age.stderr)")
    #expect(try Data(contentsOf: opened) == Self.plaintext)
    let pyrage = try await python("import pyrage, sys; i = pyrage.ssh.Identity.from_buffer(open(sys.argv[1], 'rb').read()); open(sys.argv[3], 'wb').write(pyrage.decrypt(open(sys.argv[2], 'rb').read(), [i]))",
                                  [key.path, ours.path, opened.path + "2"])
    #expect(pyrage.status == 0)
    #expect(try Data(contentsOf: URL(filePath: opened.path + "2")) == Self.plaintext)
    // age and pyrage → odr.
    let plain = try file("plain", Self.plaintext), byAge = root.appending(path: "age.age"), byPyrage = root.appending(path: "pyrage.age")
    let sealed = try await Command.run("/usr/bin/age", ["-R", key.path + ".pub", "-o", byAge.path, plain.path])
    #expect(sealed.status == 0, "\(sealed.stderr)")
    _ = try await python("import pyrage, sys; r = pyrage.ssh.Recipient.from_str(sys.argv[1]); open(sys.argv[3], 'wb').write(pyrage.encrypt(open(sys.argv[2], 'rb').read(), [r]))",
                         [publicLine.trimmingCharacters(in: .whitespacesAndNewlines), plain.path, byPyrage.path])
    for sealedFile in [byAge, byPyrage] {
      #expect(try Age.decrypt(Data(contentsOf: sealedFile), identities: identities) == Self.plaintext)
    }
  }

  /// An ssh-rsa stanza whose body is longer than the modulus, or not below
  /// it, is not for this key (age's answer): libgcrypt is never handed it
  /// (it aborted the process on the longer one).
  @Test func anSSHRSABodyOutsideTheModulusIsNotForThisKey() async throws {
    defer { try? FileManager.default.removeItem(at: root) }
    let (key, publicLine) = try await sshKeygen("rsa", bits: 2048)
    let identities = try AgeIdentity.parseFile(try String(contentsOf: key, encoding: .utf8))
    let sealed = try Age.encrypt(Data("secret".utf8), to: [try AgeRecipient(publicLine)])
    let lines = String(decoding: sealed.prefix(200), as: UTF8.self).split(separator: "\n").map(String.init)
    let stanza = try #require(lines.first { $0.hasPrefix("-> ssh-rsa ") })
    for body in [[UInt8](repeating: 0x01, count: 257), [UInt8](repeating: 0xff, count: 256)] {
      let encoded = Data(body).base64EncodedString().replacingOccurrences(of: "=", with: "")
      // age wraps a body at 64 columns; one of exactly 64·n ends with an empty line
      var wrapped = stride(from: 0, to: encoded.count, by: 64).map { String(encoded.dropFirst($0).prefix(64)) }
      if encoded.count % 64 == 0 { wrapped.append("") }
      let header = ["age-encryption.org/v1", stanza] + wrapped + ["--- " + String(repeating: "A", count: 43)]
      let forged = Data((header.joined(separator: "\n") + "\n").utf8) + Data(repeating: 0, count: 64)
      let error = #expect(throws: TrustError.self) { try Age.decrypt(forged, identities: identities) }
      #expect(error?.code == .noIdentity, "\(String(describing: error))")
    }
  }

  @Test func x25519InteroperatesWithPyrage() async throws {
    defer { try? FileManager.default.removeItem(at: root) }
    let mine = AgeIdentity()
    let ours = try file("ours.age", try Age.encrypt(Self.plaintext, to: [mine.recipient]))
    let opened = root.appending(path: "opened")
    _ = try await python("import pyrage, sys; i = pyrage.x25519.Identity.from_str(sys.argv[1]); open(sys.argv[3], 'wb').write(pyrage.decrypt(open(sys.argv[2], 'rb').read(), [i]))",
                         [mine.secretKeyString, ours.path, opened.path])
    #expect(try Data(contentsOf: opened) == Self.plaintext)
    let plain = try file("plain", Self.plaintext), theirs = root.appending(path: "theirs.age")
    let made = try await python("import pyrage, sys; i = pyrage.x25519.Identity.generate(); print(str(i.to_public())); open(sys.argv[2], 'wb').write(pyrage.encrypt(open(sys.argv[1], 'rb').read(), [i.to_public()])); print(str(i))",
                                [plain.path, theirs.path])
    let lines = made.stdout.split(separator: "\n").map(String.init)
    let identity = try AgeIdentity(lines[1])
    #expect(identity.recipient.description == lines[0])
    #expect(try Age.decrypt(Data(contentsOf: theirs), identities: [identity]) == Self.plaintext)
  }

  @Test func encryptedOrForeignSSHKeysAreRefusedClearly() async throws {
    defer { try? FileManager.default.removeItem(at: root) }
    let key = root.appending(path: "locked")
    let made = try await Command.run("/usr/bin/ssh-keygen", ["-q", "-t", "ed25519", "-N", "a passphrase", "-f", key.path])
    try #require(made.status == 0, "\(made.stderr)")
    let locked = #expect(throws: TrustError.self) { try AgeIdentity.parseFile(try String(contentsOf: key, encoding: .utf8)) }
    #expect(locked?.message.contains("protected by a passphrase") == true)
    let short = try await sshKeygen("rsa", bits: 1024)
    let weak = #expect(throws: TrustError.self) { try AgeRecipient(short.publicLine) }
    #expect(weak?.message.contains("at least 2048 bits") == true)
    let ecdsa = #expect(throws: TrustError.self) { try AgeRecipient("ecdsa-sha2-nistp256 AAAAE2VjZHNhLXNoYTItbmlzdHAyNTY= me@host") }
    #expect(ecdsa?.message.contains("are not age recipients") == true)
    let file = """
      # team
      no-agent-forwarding,from="10.0.0.0/8" \(try await sshKeygen().publicLine)
      \(AgeIdentity().recipient)
      """
    let parsed = try AgeRecipient.parseFile(file)
    #expect(parsed.recipients.count == 2 && parsed.linesWithOptions == [2])
  }
}
