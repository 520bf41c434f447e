import Foundation
import ODRProxy
@testable import ODRProxyServer
import ODRTesting
import Testing

/// The run's CA, checked by OpenSSL (`openssl verify -x509_strict`, the
/// checks of Python 3.13's `VERIFY_X509_STRICT`): its leaves verify for
/// the bound hosts, and a leaf it signs for any other host does not.
@Suite(.enabled(if: TestSelection.untagged)) struct RunAuthorityTests {
  /// A DER certificate as PEM (RFC 7468: base64 in lines of 64), what
  /// `openssl x509 -inform DER` writes.
  static func pem(_ der: some Sequence<UInt8>) -> String {
    let base64 = Array(Data(der).base64EncodedString())
    let lines = stride(from: 0, to: base64.count, by: 64).map { String(base64[$0..<min($0 + 64, base64.count)]) }
    return "-----BEGIN CERTIFICATE-----\n" + lines.joined(separator: "\n") + "\n-----END CERTIFICATE-----\n"
  }

  @Test(arguments: [("api.example", true), ("sub.api.example", true), ("evil.example", false), ("127.0.0.1", true),
                    ("10.0.0.1", false), ("::1", true), ("::2", false)])
  func leavesVerifyForTheBoundHostsOnly(host: String, verifies: Bool) async throws {
    let authority = try RunAuthority(hosts: [ProxyHost("api.example")!, ProxyHost("127.0.0.1")!, ProxyHost("::1")!])
    let folder = FileManager.default.temporaryDirectory.appending(path: "odr-ca-\(UUID().uuidString)")
    try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
    defer { try? FileManager.default.removeItem(at: folder) }  // best effort: the test is over
    try Data(authority.certificatePEM.utf8).write(to: folder.appending(path: "ca.pem"))
    let leaf = try authority.leaf(for: try #require(ProxyHost(host)))
    try Data(Self.pem(leaf.certificate).utf8).write(to: folder.appending(path: "leaf.pem"))
    let check = ProxyHost(host)!.kind == .name ? ["-verify_hostname", host] : ["-verify_ip", host]
    let verify = try await Command.run("/usr/bin/openssl", ["verify", "-x509_strict", "-purpose", "sslserver", "-CAfile",
                                                            folder.appending(path: "ca.pem").path] + check + [folder.appending(path: "leaf.pem").path])
    #expect((verify.status == 0) == verifies, "\(host): \(verify.stdout) \(verify.stderr)")
    if !verifies { #expect(verify.stdout.contains("subtree violation") || verify.stderr.contains("subtree violation"), "\(verify.stderr)") }
  }

  @Test func aCAWithNoNameOrNoAddressClosesThatKind() async throws {
    let addresses = try RunAuthority(hosts: [ProxyHost("127.0.0.1")!])
    let names = try RunAuthority(hosts: [ProxyHost("api.example")!])
    for (authority, host) in [(addresses, "api.example"), (names, "127.0.0.1")] {
      let folder = FileManager.default.temporaryDirectory.appending(path: "odr-ca-\(UUID().uuidString)")
      try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
      defer { try? FileManager.default.removeItem(at: folder) }  // best effort: the test is over
      try Data(authority.certificatePEM.utf8).write(to: folder.appending(path: "ca.pem"))
      try Data(Self.pem(try authority.leaf(for: ProxyHost(host)!).certificate).utf8).write(to: folder.appending(path: "leaf.pem"))
      let verify = try await Command.run("/usr/bin/openssl", ["verify", "-x509_strict", "-CAfile", folder.appending(path: "ca.pem").path, folder.appending(path: "leaf.pem").path])
      #expect(verify.status != 0, "a leaf for \(host) verified under a CA bound to the other kind")
    }
  }

  @Test func theBundleIsWhatOdrTrustsThenTheRunCA() throws {
    let authority = try RunAuthority(hosts: [ProxyHost("api.example")!])
    let folder = FileManager.default.temporaryDirectory.appending(path: "odr-ca-\(UUID().uuidString)")
    try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
    defer { try? FileManager.default.removeItem(at: folder) }  // best effort: the test is over
    try Data("-----BEGIN CERTIFICATE-----\nsystem\n-----END CERTIFICATE-----".utf8).write(to: folder.appending(path: "system.pem"))
    let bundle = authority.bundle(trusting: folder.appending(path: "system.pem").path)
    #expect(bundle.hasPrefix("-----BEGIN CERTIFICATE-----\nsystem\n-----END CERTIFICATE-----\n-----BEGIN CERTIFICATE-----"))
    #expect(bundle.hasSuffix(authority.certificatePEM))
    #expect(authority.bundle(trusting: nil) == authority.certificatePEM)
    #expect(RunAuthority.systemBundle(environment: ["SSL_CERT_FILE": "/x.pem"]) == "/x.pem")
  }
}
