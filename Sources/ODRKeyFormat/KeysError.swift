public import ODRBase

/// The one error type of ODRKeys. Messages name keys, never their values.
public typealias KeysError = DomainError<KeysDomain>

/// The domain of ``KeysError``: "keys"; an interrupted import is put back at the next read: transient.
public enum KeysDomain: ErrorDomain {
  public static let name = "keys"
  public static func isTransient(_ code: KeysError.Code) -> Bool { code == .interruptedImport }
}

extension ErrorCode where Owner == KeysError {
  /// An APIKeys document that breaks the rules of docs/design.md, "APIKeys documents".
  public static let invalidDocument = Self("invalid-document")
  /// An import failed and some keys could not be put back as they were
  /// yet: its journal puts them back at the next read of the keys.
  public static let interruptedImport = Self("interrupted-import")
  /// An encrypted secrets tag none of this machine's identities can open.
  public static let notRecipient = Self("not-recipient")
}
