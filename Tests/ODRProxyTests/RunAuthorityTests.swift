import Foundation
import ODRProxy
@testable import ODRProxyServer
import ODRTesting
import Testing

/// The run's CA, checked by OpenSSL (`openssl verify -x509_strict`, the
/// checks of Python 3.13's `VERIFY_X509_STRICT`): its leaves verify for
/// the bound hosts, and a leaf it signs for any other host does not.
@Suite(.enabled(if: TestSelection.untagged)) struct RunAuthorityTests {
  @Test(arguments: [("api.example", true), ("sub.api.example", true), ("evil.example", false), ("127.0.0.1", true),
                    ("10.0.0.1", false), ("::1", true), ("::2", false)])
  func leavesVerifyForTheBoundHostsOnly(host: String, verifies: Bool) async throws {
    let authority = try RunAuthority(hosts: [ProxyHost("api.example")!, ProxyHost("127.0.0.1")!, ProxyHost("::1")!])
    let folder = FileManager.default.temporaryDirectory.appending(path: "odr-ca-\(UUID().uuidString)")
    try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
    defer { try? FileManager.default.removeItem(at: folder) }  // best effort: the test is over
    try Data(authority.certificatePEM.utf8).write(to: folder.appending(path: "ca.pem"))
    let leaf = try authority.leaf(for: try #require(ProxyHost(host)))
    try Data(leaf.certificate).write(to: folder.appending(path: "leaf.der"))
    let pem = try await Command.run("/usr/bin/openssl", ["x509", "-inform", "DER", "-in", folder.appending(path: "leaf.der").path,
                                                          "-out", folder.appending(path: "leaf.pem").path])
    try #require(pem.status == 0, "\(pem.stderr)")
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
      try Data(try authority.leaf(for: ProxyHost(host)!).certificate).write(to: folder.appending(path: "leaf.der"))
      _ = try await Command.run("/usr/bin/openssl", ["x509", "-inform", "DER", "-in", folder.appending(path: "leaf.der").path, "-out", folder.appending(path: "leaf.pem").path])
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
