public import ODRBase
public import FoundationEssentials
public import ODRAge
import ODRCatalog
import ODRKeyFormat
public import ODRSigning

/// How `odr pack` protects what it publishes (docs/design.md, "The published catalog", §3.4).
public struct PackOptions: Sendable {
  /// Recipients added to every secrets tag (besides each tag's own
  /// `recipients` in tags.json).
  public var recipients: [AgeRecipient] = []
  /// Wraps file keys for `awskms:` recipients (ODRTransports' AWSKMS,
  /// with credentials allowed `kms:Encrypt`); nil: such recipients are refused.
  public var keyService: (any KeyWrapService)?
  /// Publish secrets tags without recipients in plaintext (with a warning)
  /// instead of refusing them.
  public var plaintextSecrets = false
  /// Checks one document of a secrets tag (its path and plaintext) before
  /// anything is written; throw to refuse the pack. By default, the
  /// APIKeys rules (``APIKeysDocument/parse(_:)``); `odr pack` also checks
  /// that every name can be an environment variable.
  public var validateSecrets: @Sendable (String, Data) throws -> Void = { path, data in
    do { _ = try APIKeysDocument.parse(data) } catch let error as KeysError {
      throw ResourceError(.invalidSource, "\(path): \(error.message) Nothing was written.", underlying: error)
    }
  }
  /// Sign `catalog.json` into `catalog.json.sig`, one line each; empty:
  /// unsigned. Any hybrid post-quantum key makes the catalog format 3
  /// (every line then signs that format's form). Moving to post-quantum
  /// signatures signs with the old key and the new one (docs/trust.md).
  public var signingKeys: [SigningKey] = []
  /// When the catalog expires (default: 90 days from now when signing).
  public var expires: Date?
  /// The keys allowed to sign the next versions (default: the signing keys).
  public var nextSigners: [VerifyingKey] = []
  /// The catalog this one replaces (default: the one in the output
  /// folder): its hand-over chain is carried forward and its signers decide
  /// which keys may sign. For a build that packs into an empty folder, the
  /// published folder, or the published catalog read from its host.
  public var previous: PreviousCatalog?
  /// Sign with a key the previous catalog's signers do not include, and
  /// start a new hand-over chain (clients must pin the new key).
  public var newTrustRoot = false
  /// The bundle id to publish under instead of `tags.json`'s (a staging or
  /// trial catalog of the same folder).
  public var bundle: String?
  /// Hears warnings and advice, one line each.
  public var notify: @Sendable (String) -> Void = { _ in }

  /// How long a signed catalog is valid when `expires` is not given.
  public static let defaultValidity: Duration = .seconds(90 * 86_400)

  public init() {}
}
