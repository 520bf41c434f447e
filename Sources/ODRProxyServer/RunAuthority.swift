#if canImport(Glibc)
import Glibc
#endif
public import FoundationEssentials
import Crypto
import NIOSSL
import ODRBase
public import ODRProxy
import SwiftASN1
import Synchronization
import X509

/// The certificate authority of one `odr exec --proxy` run: made when the
/// run starts, its private key in memory only, valid for at most
/// ``lifetime``, and able to sign for the bound hosts only — critical Name
/// Constraints permit those names (and, as DNS constraints do, the names
/// below them) and exactly those addresses (a type with no
/// bound host is closed: names under `.invalid`, no address), so a leaf
/// for any other host fails verification even if the key leaked. Clients
/// trust it through the bundle odr writes (``bundle(trusting:)``).
///
/// Certificates are made to pass OpenSSL's strict checks (Python 3.13's
/// `VERIFY_X509_STRICT`): the CA with critical basic constraints, key
/// usage and a subject key identifier; each leaf with an authority key
/// identifier, a subject alternative name, server-auth extended key usage.
public final class RunAuthority: Sendable {
  /// How long the CA and its leaves are valid (a run that lasts longer
  /// needs a new `odr exec`).
  public static let lifetime: TimeInterval = 7 * 24 * 3600

  /// The CA's certificate, PEM.
  public let certificatePEM: String
  private let certificate: Certificate
  private let key: P256.Signing.PrivateKey
  private let notBefore: Date
  private let notAfter: Date
  /// TLS server contexts made so far, by host.
  private let contexts = Mutex<[ProxyHost: NIOSSLContext]>([:])

  /// A new CA for `hosts`, valid from a little before `now` (clock skew)
  /// for ``lifetime``.
  public init(hosts: Set<ProxyHost>, now: Date = Date()) throws {
    key = P256.Signing.PrivateKey()
    notBefore = now.addingTimeInterval(-3600)
    notAfter = now.addingTimeInterval(Self.lifetime)
    let names = hosts.filter { $0.kind == .name }.map(\.text).sorted()
    let addresses = hosts.compactMap(Self.addressBytes).sorted { $0.lexicographicallyPrecedes($1) }
    let constraints = NameConstraints(
      permittedDNSDomains: names.isEmpty ? ["invalid"] : names,
      permittedIPRanges: addresses.map { ASN1OctetString(contentBytes: ArraySlice($0 + [UInt8](repeating: 0xff, count: $0.count))) },
      excludedIPRanges: addresses.isEmpty ? [ASN1OctetString(contentBytes: ArraySlice([UInt8](repeating: 0, count: 8))),
                                              ASN1OctetString(contentBytes: ArraySlice([UInt8](repeating: 0, count: 32)))] : [])
    let name = try DistinguishedName {
      OrganizationName("odr")
      CommonName("odr exec --proxy run \(UUID().uuidString.prefix(8).lowercased())")
    }
    let publicKey = Certificate.PublicKey(key.publicKey)
    let identifier = SubjectKeyIdentifier(hash: publicKey)
    let extensions = try Certificate.Extensions {
      Critical(BasicConstraints.isCertificateAuthority(maxPathLength: 0))
      Critical(KeyUsage(keyCertSign: true, cRLSign: true))
      Critical(constraints)
      identifier
      AuthorityKeyIdentifier(keyIdentifier: identifier.keyIdentifier)
    }
    certificate = try Certificate(version: .v3, serialNumber: Certificate.SerialNumber(), publicKey: publicKey,
                                  notValidBefore: notBefore, notValidAfter: notAfter, issuer: name, subject: name,
                                  signatureAlgorithm: .ecdsaWithSHA256, extensions: extensions, issuerPrivateKey: Certificate.PrivateKey(key))
    certificatePEM = try certificate.serializeAsPEM().pemString + "\n"
  }

  /// A leaf for `host` signed by this CA, and its private key (DER, PKCS #8).
  public func leaf(for host: ProxyHost) throws -> (certificate: [UInt8], privateKey: [UInt8]) {
    let leafKey = P256.Signing.PrivateKey()
    let publicKey = Certificate.PublicKey(leafKey.publicKey)
    let alternative: GeneralName = Self.addressBytes(host).map { .ipAddress(ASN1OctetString(contentBytes: ArraySlice($0))) } ?? .dnsName(host.text)
    // An IP literal stays out of the common name: OpenSSL checks a common
    // name as a DNS name against the CA's name constraints.
    let subject = host.kind == .name ? try DistinguishedName { CommonName(host.text) } : try DistinguishedName { OrganizationName("odr") }
    let extensions = try Certificate.Extensions {
      Critical(BasicConstraints.notCertificateAuthority)
      Critical(KeyUsage(digitalSignature: true))
      try ExtendedKeyUsage([.serverAuth])
      SubjectAlternativeNames([alternative])
      SubjectKeyIdentifier(hash: publicKey)
      AuthorityKeyIdentifier(keyIdentifier: try certificate.extensions.subjectKeyIdentifier?.keyIdentifier)
    }
    let leaf = try Certificate(version: .v3, serialNumber: Certificate.SerialNumber(), publicKey: publicKey,
                               notValidBefore: notBefore, notValidAfter: notAfter, issuer: certificate.subject, subject: subject,
                               signatureAlgorithm: .ecdsaWithSHA256, extensions: extensions, issuerPrivateKey: Certificate.PrivateKey(key))
    var serializer = DER.Serializer()
    try serializer.serialize(leaf)
    return (serializer.serializedBytes, Array(leafKey.derRepresentation))
  }

  /// The TLS server context the proxy presents for `host`: a leaf of its
  /// own, HTTP/1.1 only (ALPN), made once per host and run.
  func serverContext(for host: ProxyHost) throws -> NIOSSLContext {
    if let known = contexts.withLock({ $0[host] }) { return known }
    let (leafDER, keyDER) = try leaf(for: host)
    var configuration = TLSConfiguration.makeServerConfiguration(
      certificateChain: [.certificate(try NIOSSLCertificate(bytes: leafDER, format: .der))],
      privateKey: .privateKey(try NIOSSLPrivateKey(bytes: keyDER, format: .der)))
    configuration.applicationProtocols = ["http/1.1"]
    configuration.minimumTLSVersion = .tlsv12
    let context = try NIOSSLContext(configuration: configuration)
    return contexts.withLock { contexts in
      if let known = contexts[host] { return known }
      contexts[host] = context
      return context
    }
  }

  /// The CA bundle a child is pointed at: the certificates of `trusted` (a
  /// PEM file: what odr itself trusts) followed by this CA's.
  public func bundle(trusting trusted: String?) -> String {
    let system = trusted.flatMap { path in dropping(.isTheAnswer) { try String(contentsOfFile: path, encoding: .utf8) } } ?? ""
    return system + (system.isEmpty || system.hasSuffix("\n") ? "" : "\n") + certificatePEM
  }

  /// The PEM file of the system's trusted certificates, where Debian,
  /// Fedora and Alpine keep it; nil when there is none.
  public static func systemBundle(environment: [String: String]) -> String? {
    if let file = environment["SSL_CERT_FILE"], !file.isEmpty { return file }
    return ["/etc/ssl/certs/ca-certificates.crt", "/etc/pki/tls/certs/ca-bundle.crt", "/etc/ssl/cert.pem"]
      .first { FileManager.default.isReadableFile(atPath: $0) }
  }

  /// An IP literal's bytes (4 or 16); nil for a name.
  static func addressBytes(_ host: ProxyHost) -> [UInt8]? {
    guard host.kind != .name else { return nil }
    var bytes = [UInt8](repeating: 0, count: host.kind == .ipv4 ? 4 : 16)
    guard inet_pton(host.kind == .ipv4 ? AF_INET : AF_INET6, host.text, &bytes) == 1 else { return nil }
    return bytes
  }
}
