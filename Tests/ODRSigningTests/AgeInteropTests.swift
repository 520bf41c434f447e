import ODRBase
import Foundation
import ODRAge
import ODRTesting
import ODRSigning
import Testing

/// odr's age v1 against the stock `age` and `age-keygen` tools, both ways.
@Suite(.enabled(if: TestSelection.untagged), .timeLimit(.minutes(3))) struct AgeInteropTests {
  let root = FileManager.default.temporaryDirectory.appending(path: "odr-age-\(UUID().uuidString)")

  init() throws {
    try FileManager.default.createDirectory(at: root, withIntermediateDirectories: true)
  }

  /// Two identities made by `age-keygen`, once for the suite (each test
  /// reads them, none changes them): their files and recipients, read from
  /// the `# public key:` line age-keygen writes.
  static let keys: [(file: URL, recipient: String)] = (0..<2).map { index in
    let file = FileManager.default.temporaryDirectory.appending(path: "odr-age-keygen-\(getpid())-\(index).txt")
    // the tests below fail on a missing or empty file: no identity, no recipient
    _ = dropping(.bestEffort) { try Command.runBlocking("/usr/bin/age-keygen", ["-o", file.path]) }
    let text = (dropping(.bestEffort) { try String(contentsOf: file, encoding: .utf8) }) ?? ""
    let recipient = text.split(separator: "\n").first { $0.hasPrefix("# public key: ") }?.dropFirst(14) ?? ""
    return (file, String(recipient))
  }

  /// An identity made by `age-keygen` (the first, or the second for a test that needs two).
  func ageKeygen(_ index: Int = 0) throws -> (file: URL, recipient: String) {
    let key = Self.keys[index]
    try #require(key.recipient.hasPrefix("age1"), "age-keygen made no identity")
    return key
  }

  func write(_ data: Data) throws -> URL {
    let file = root.appending(path: "blob-\(UUID().uuidString)")
    try data.write(to: file)
    return file
  }

  func ageDecrypt(_ file: URL, identity: URL) async throws -> (status: Int32, data: Data) {
    let out = root.appending(path: "out-\(UUID().uuidString)")
    let result = try await Command.run("/usr/bin/age", ["-d", "-i", identity.path, "-o", out.path, file.path])
    return (result.status, (try? Data(contentsOf: out)) ?? Data())
  }

  static let sizes = [0, 1, 100, 65_535, 65_536, 65_537, 2 * 65_536, 200_000]

  static func plaintext(_ size: Int) -> Data {
    Data((0..<size).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ 7) })
  }

  @Test(arguments: sizes) func ageDecryptsWhatOdrEncrypts(size: Int) async throws {
    defer { try? FileManager.default.removeItem(at: root) }
    let key = try ageKeygen()
    let blob = try write(try Age.encrypt(Self.plaintext(size), to: [try AgeRecipient(key.recipient)]))
    let result = try await ageDecrypt(blob, identity: key.file)
    #expect(result.status == 0)
    #expect(result.data == Self.plaintext(size))
  }

  @Test(arguments: sizes) func odrDecryptsWhatAgeEncrypts(size: Int) async throws {
    defer { try? FileManager.default.removeItem(at: root) }
    let key = try ageKeygen()
    let other = AgeIdentity()
    let input = try write(Self.plaintext(size))
    let output = root.appending(path: "enc")
    let made = try await Command.run("/usr/bin/age", ["-r", other.recipient.description, "-r", key.recipient, "-o", output.path, input.path])
    try #require(made.status == 0, "\(made.stderr)")
    let identities = try AgeIdentity.parseFile(String(decoding: try Data(contentsOf: key.file), as: UTF8.self))
    #expect(try Age.decrypt(try Data(contentsOf: output), identities: identities) == Self.plaintext(size))
  }

  @Test func anExportedIdentityWorksWithAgeAndAgeKeygenAgrees() async throws {
    defer { try? FileManager.default.removeItem(at: root) }
    let identity = AgeIdentity()
    let file = try write(Data(identity.fileText.utf8))
    #expect(try await Command.run("/usr/bin/age-keygen", ["-y", file.path]).stdout == "\(identity.recipient)\n")
    let blob = try write(try Age.encrypt(Data("k-123".utf8), to: [identity.recipient]))
    #expect(try await ageDecrypt(blob, identity: file).data == Data("k-123".utf8))
    #expect(try AgeIdentity(identity.secretKeyString).recipient == identity.recipient)
    #expect(!"\(identity)".contains(identity.secretKeyString))
  }

  @Test func theWrongIdentityIsRefusedByBoth() async throws {
    defer { try? FileManager.default.removeItem(at: root) }
    let mine = try ageKeygen(0), theirs = try ageKeygen(1)
    let blob = try write(try Age.encrypt(Data("secret".utf8), to: [try AgeRecipient(theirs.recipient)]))
    #expect(try await ageDecrypt(blob, identity: mine.file).status != 0)
    let identities = try AgeIdentity.parseFile(String(decoding: try Data(contentsOf: mine.file), as: UTF8.self))
    let error = #expect(throws: TrustError.self) { try Age.decrypt(try Data(contentsOf: blob), identities: identities) }
    #expect(error?.code == .noIdentity)
  }

  /// Damage at the header MAC, inside the payload, or a cut: both tools refuse.
  @Test(arguments: ["mac", "payload", "lastByte", "truncated", "chunkDropped", "stanza"])
  func damagedFilesAreRefusedByBoth(damage: String) async throws {
    defer { try? FileManager.default.removeItem(at: root) }
    let key = try ageKeygen()
    let identities = try AgeIdentity.parseFile(String(decoding: try Data(contentsOf: key.file), as: UTF8.self))
    var bytes = Array(try Age.encrypt(Self.plaintext(150_000), to: [try AgeRecipient(key.recipient)]))
    let macLine = try #require(bytes.indices.first { bytes[$0...].starts(with: Array("--- ".utf8)) })
    let payload = bytes[macLine...].firstIndex(of: UInt8(ascii: "\n"))! + 1
    switch damage {
    case "mac": bytes[macLine + 6] = bytes[macLine + 6] == UInt8(ascii: "A") ? UInt8(ascii: "B") : UInt8(ascii: "A")
    case "payload": bytes[payload + 16 + 1000] ^= 1
    case "lastByte": bytes[bytes.count - 1] ^= 0x80
    case "truncated": bytes.removeLast(20_000)
    case "chunkDropped": bytes.removeSubrange((payload + 16)..<(payload + 16 + 65_552))
    default:  // the recipient's share in the stanza line
      let stanza = bytes.indices.first { bytes[$0...].starts(with: Array("-> X25519 ".utf8)) }! + 12
      bytes[stanza] = bytes[stanza] == UInt8(ascii: "A") ? UInt8(ascii: "B") : UInt8(ascii: "A")
    }
    let blob = try write(Data(bytes))
    #expect(try await ageDecrypt(blob, identity: key.file).status != 0)
    #expect(throws: TrustError.self) { try Age.decrypt(Data(bytes), identities: identities) }
  }

  @Test func malformedKeysAreRefusedWithoutEchoingSecrets() throws {
    defer { try? FileManager.default.removeItem(at: root) }
    let identity = AgeIdentity()
    var broken = Array(identity.secretKeyString)
    broken[20] = broken[20] == "Q" ? "P" : "Q"
    let error = #expect(throws: TrustError.self) { try AgeIdentity(String(broken)) }
    #expect(error.map { !$0.message.contains(String(broken)) } == true)
    #expect(throws: TrustError.self) { try AgeRecipient(identity.recipient.description.uppercased() + "x") }
    #expect(throws: TrustError.self) { try AgeRecipient("age1qqqq") }
    #expect(try AgeRecipient(" \(identity.recipient) ") == identity.recipient)
  }
  /// Red team 19: a low-order X25519 share is a malformed file (as age says),
  /// not "not a recipient".
  @Test func aLowOrderShareIsRefusedAsAgeRefusesIt() async throws {
    defer { try? FileManager.default.removeItem(at: root) }
    let (keyFile, recipient) = try ageKeygen()
    let identities = try AgeIdentity.parseFile(String(contentsOf: keyFile, encoding: .utf8))
    let file = try Age.encrypt(Data("secret".utf8), to: [try AgeRecipient(recipient)])
    var text = String(decoding: file, as: UTF8.self)
    let stanza = try #require(text.range(of: "-> X25519 "))
    let shareEnd = try #require(text[stanza.upperBound...].firstIndex(of: "\n"))
    text.replaceSubrange(stanza.upperBound..<shareEnd, with: String(repeating: "A", count: 43))  // the all-zero point
    let forged = Data(text.utf8.prefix(text.utf8.count))
    #expect(throws: TrustError.self) {
      do { _ = try Age.decrypt(forged, identities: identities) } catch let error as TrustError {
        #expect(error.code == .ageHeader, "\(error.message)")
        throw error
      }
    }
    #expect(try await ageDecrypt(try write(forged), identity: keyFile).status != 0)
  }

  /// Red team 19: identity files are read as age reads them: a lower-case
  /// or indented key line is an error, for odr as for age.
  @Test(arguments: ["lower", "indented"])
  func identityFileLinesAreStrict(_ how: String) async throws {
    defer { try? FileManager.default.removeItem(at: root) }
    let (keyFile, recipient) = try ageKeygen()
    let text = try String(contentsOf: keyFile, encoding: .utf8)
    #expect(try AgeIdentity.parseFile(text).count == 1)
    let changed = text.split(separator: "\n").map { line in
      guard line.hasPrefix("AGE-SECRET-KEY-") else { return String(line) }
      return how == "lower" ? line.lowercased() : "  " + line
    }.joined(separator: "\n") + "\n"
    #expect(throws: TrustError.self) { try AgeIdentity.parseFile(changed) }
    let changedFile = try write(Data(changed.utf8))
    let file = try write(try Age.encrypt(Data("secret".utf8), to: [try AgeRecipient(recipient)]))
    #expect(try await ageDecrypt(file, identity: changedFile).status != 0)
  }
}
