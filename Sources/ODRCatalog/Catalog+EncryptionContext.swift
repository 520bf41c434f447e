extension Catalog {
  /// The encryption context a secrets tag's AWS KMS stanzas are bound to:
  /// KMS opens the file key only with the same bundle and tag, so a
  /// ciphertext copied into another bundle or tag does not open.
  public func encryptionContext(of tag: String) -> [String: String] {
    ["odr:bundle": bundle, "odr:tag": tag]
  }
}
