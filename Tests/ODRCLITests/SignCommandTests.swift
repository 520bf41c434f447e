import Foundation
import ODRCLITesting
import ODRTesting
import Testing

/// `odr sign`: detached OpenPGP signatures checked by the verifiers Debian
/// machines have, gpgv (GnuPG) and sqv (Sequoia), the peers of the format.
@Suite(.enabled(if: TestSelection.untagged), .timeLimit(.minutes(2))) struct SignCommandTests {
  let root = FileManager.default.temporaryDirectory.appending(path: "odr-sign-\(UUID().uuidString)")

  init() throws {
    try FileManager.default.createDirectory(at: root, withIntermediateDirectories: true)
  }

  /// A fresh exported signing key in a file.
  func keyFile(_ name: String) throws -> URL {
    var seed = [UInt8](repeating: 0, count: 32)
    for index in seed.indices { seed[index] = UInt8.random(in: 0...255) }
    let file = root.appending(path: name)
    try Data("ed25519-secret:\(Data(seed).base64EncodedString())\n".utf8).write(to: file)
    return file
  }

  func verify(_ signature: URL, _ file: URL, certificate: URL) async throws -> (gpgv: Int32, sqv: Int32) {
    let gpgv = try await Command.run("/usr/bin/gpgv", ["--keyring", certificate.path, signature.path, file.path])
    let sqv = try await Command.run("/usr/bin/sqv", ["--keyring", certificate.path, signature.path, file.path])
    return (gpgv.status, sqv.status)
  }

  @Test func gpgvAndSqvAcceptTheSignatureAndRefuseAFlippedByte() async throws {
    defer { try? FileManager.default.removeItem(at: root) }
    let sums = root.appending(path: "SHA256SUMS")
    try Data("0123abcd  odr-0.1.0-linux-x86_64.tar.gz\n".utf8).write(to: sums)
    let certificate = root.appending(path: "release.pgp")
    let key = try keyFile("release.key")
    let signed = try await Command.odr(["sign", sums.path, "--sign-key-file", key.path, "--certificate", certificate.path])
    #expect(signed.status == 0, "\(signed.stderr)")
    #expect(signed.stderr.contains("OpenPGP fingerprint"))
    let good = try await verify(root.appending(path: "SHA256SUMS.sig"), sums, certificate: certificate)
    #expect(good.gpgv == 0 && good.sqv == 0, "gpgv \(good.gpgv), sqv \(good.sqv)")

    var bytes = try Data(contentsOf: sums)
    bytes[0] ^= 0x01
    try bytes.write(to: sums)
    let flipped = try await verify(root.appending(path: "SHA256SUMS.sig"), sums, certificate: certificate)
    #expect(flipped.gpgv != 0 && flipped.sqv != 0)

    // Another key's certificate does not vouch for this signature.
    bytes[0] ^= 0x01
    try bytes.write(to: sums)
    let other = root.appending(path: "other.pgp")
    #expect(try await Command.odr(["sign", sums.path, "-o", root.appending(path: "o.sig").path, "--sign-key-file", try keyFile("other.key").path,
                                   "--certificate", other.path]).status == 0)
    let wrongKey = try await verify(root.appending(path: "SHA256SUMS.sig"), sums, certificate: other)
    #expect(wrongKey.gpgv != 0 && wrongKey.sqv != 0)
  }

  @Test func theCertificateNamesTheSameKeyEveryTime() async throws {
    defer { try? FileManager.default.removeItem(at: root) }
    let file = root.appending(path: "f")
    try Data("x".utf8).write(to: file)
    let key = try keyFile("k")
    let first = try await Command.odr(["sign", file.path, "--sign-key-file", key.path])
    let second = try await Command.odr(["sign", file.path, "--sign-key-file", key.path])
    let fingerprint = { (text: String) in text.split(separator: " ").last.map { String($0.dropLast(2)) } }  // "…ABCD)\n"
    #expect(first.status == 0 && second.status == 0)
    let once = try #require(fingerprint(first.stderr))
    #expect(once.count == 40 && once.allSatisfy(\.isHexDigit), "\(first.stderr)")
    #expect(fingerprint(second.stderr) == once)
    let other = try await Command.odr(["sign", file.path, "--sign-key-file", try keyFile("k2").path])
    #expect(fingerprint(other.stderr) != once)
  }

  @Test func withoutAKeyOrAFileItSaysWhatIsMissing() async throws {
    defer { try? FileManager.default.removeItem(at: root) }
    let file = root.appending(path: "f")
    try Data("x".utf8).write(to: file)
    var env = ProcessInfo.processInfo.environment
    env["ODR_SIGNING_KEY"] = nil
    let noKey = try await Command.odr(["sign", file.path], environment: env)
    #expect(noKey.status == 2)
    #expect(noKey.stderr.contains("--sign NAME"))
    #expect(!FileManager.default.fileExists(atPath: file.path + ".sig"))
    let noFile = try await Command.odr(["sign", root.appending(path: "missing").path, "--sign-key-file", try keyFile("k").path])
    #expect(noFile.status == 1)
    #expect(noFile.stderr.contains("Cannot read"))
  }
}
