import Foundation
import ODRSigning
import Testing

/// The hand-over chain at its own level: what `verify` refuses, what
/// `reach` adds, and what the statement's signature covers — one table
/// each, with keys made for the test.
@Suite struct HandoverTests {
  static let bundle = "com.example.demo"
  /// Six signing keys: k[0] is the one a client trusts; k[4] and k[5] are
  /// hybrid post-quantum.
  static let k = (0..<4).map { _ in SigningKey() } + (0..<2).map { _ in try! SigningKey(postQuantum: true) }
  static func v(_ index: Int) -> VerifyingKey { k[index].verifyingKey }

  /// A statement by key `by` handing over to keys `to` at `version`.
  static func link(_ by: Int, to: [Int], at version: Int, bundle: String = bundle) throws -> Handover {
    try Handover(bundle: bundle, version: version, signers: to.map(v), signedWith: k[by])
  }

  /// Each chain, the catalog version it is checked up to, and the keys
  /// trusted after it from k[0] (nil: refused).
  static let chains: [(name: String, chain: @Sendable () throws -> [Handover], upTo: Int, reached: Set<Int>?)] = [
    ("empty", { [] }, 5, [0]),
    ("one step", { [try link(0, to: [1], at: 2)] }, 5, [0, 1]),
    ("two steps", { [try link(0, to: [1], at: 2), try link(1, to: [2], at: 4)] }, 5, [0, 1, 2]),
    ("to a set of two", { [try link(0, to: [1, 2], at: 3)] }, 3, [0, 1, 2]),
    ("a link by a key never reached adds nothing", { [try link(3, to: [2], at: 2)] }, 5, [0]),
    ("the same version twice is in order", { [try link(0, to: [1], at: 2), try link(1, to: [2], at: 2)] }, 2, [0, 1, 2]),
    ("versions going down", { [try link(0, to: [1], at: 4), try link(1, to: [2], at: 3)] }, 5, nil),
    ("a link past the catalog's version", { [try link(0, to: [1], at: 6)] }, 5, nil),
    ("a link to nobody", { [try link(0, to: [], at: 2)] }, 5, nil),
    ("a statement of another bundle", { [try link(0, to: [1], at: 2, bundle: "com.example.other")] }, 5, nil),
    ("Ed25519 to a hybrid key (the migration)", { [try link(0, to: [0, 4], at: 2), try link(0, to: [4], at: 3)] }, 5, [0, 4]),
    ("hybrid to hybrid", { [try link(0, to: [4], at: 2), try link(4, to: [5], at: 3)] }, 5, [0, 4, 5]),
    ("hybrid back to Ed25519 (a downgrade)", { [try link(0, to: [4], at: 2), try link(4, to: [1], at: 3)] }, 5, nil),
    ("hybrid to a set with an Ed25519 key", { [try link(0, to: [4], at: 2), try link(4, to: [5, 1], at: 3)] }, 5, nil),
  ]

  @Test(arguments: chains.indices)
  func eachChainIsFollowedOrRefused(_ index: Int) throws {
    let row = Self.chains[index]
    let chain = try row.chain()
    if let reached = row.reached {
      let trusted = try Handover.follow(chain, from: [Self.v(0)], bundle: Self.bundle, upTo: row.upTo)
      #expect(trusted == Set(reached.map(Self.v)), "\(row.name)")
    } else {
      #expect(throws: TrustError.self, "\(row.name)") { try Handover.follow(chain, from: [Self.v(0)], bundle: Self.bundle, upTo: row.upTo) }
    }
  }

  /// Every field the statement names is signed: changing any one after
  /// signing makes it fail, and so does a signature that is not 64 bytes.
  @Test(arguments: ["version", "signers", "signedBy", "signature", "short signature", "bundle"], [0, 4])
  func everyFieldIsCoveredByTheSignature(_ field: String, by signer: Int) throws {
    var statement = try Self.link(signer, to: [5], at: 2)
    #expect(statement.verifies(bundle: Self.bundle))
    var bundle = Self.bundle
    switch field {
    case "version": statement.version = 3
    case "signers": statement.signers = [Self.v(2)]
    case "signedBy": statement.signedBy = Self.v(signer == 0 ? 1 : 5)
    case "signature": statement.signature = try Self.link(signer, to: [5], at: 3).signature
    case "short signature": statement.signature = Data(Data(base64Encoded: statement.signature)!.dropLast()).base64EncodedString()
    default: bundle = "com.example.other"
    }
    #expect(!statement.verifies(bundle: bundle))
  }

  /// The signed bytes are the domain, the bundle, the version and the
  /// sorted signer set, one per line: a set in another order is the same
  /// statement, and no catalog signature's domain can pass for it.
  @Test func theMessageIsDomainSeparatedAndOrderFree() throws {
    let message = Handover.message(bundle: Self.bundle, version: 7, signers: [Self.v(2), Self.v(1)], signedBy: Self.v(0))
    let sorted = [Self.v(1), Self.v(2)].map(\.description).sorted().joined(separator: ",")
    #expect(String(decoding: message, as: UTF8.self) == "odr-handover-v1\ncom.example.demo\n7\n\(sorted)\n")
    #expect(message == Handover.message(bundle: Self.bundle, version: 7, signers: [Self.v(1), Self.v(2)], signedBy: Self.v(0)))
    #expect(!message.starts(with: Data(CatalogSignature.domain.utf8)))
    // A hybrid key's statement has a domain of its own.
    let hybrid = Handover.message(bundle: Self.bundle, version: 7, signers: [Self.v(5)], signedBy: Self.v(4))
    #expect(String(decoding: hybrid, as: UTF8.self) == "odr-handover-v2\ncom.example.demo\n7\n\(Self.v(5))\n")
  }
}
