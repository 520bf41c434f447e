/// How a key is laid out as a Secret Service item, so that every keyring
/// library finds it, and how items those libraries wrote are read as keys.
///
/// odr writes one item per key with `service` (the bundle id), `key`,
/// `username` and `account` (both the key's name) and `xdg:schema`
/// `org.freedesktop.Secret.Generic`: `secret-tool` and odr look items up
/// by `service` + `key`; Python's keyring, Go's go-keyring and Rust's
/// keyring crate by `service` + `username`; Node's keytar by `service` +
/// `account` in that libsecret schema (libsecret adds `xdg:schema` to its
/// search). odr's own records (`_odr.…`) carry `service` and `key` only:
/// they are no credentials of any library.
///
/// Another library's write never replaces odr's item (their "replace"
/// matches their own attribute sets), so a key may be found in more than
/// one item until odr writes it again; the one read is the most recently
/// modified, and of two modified in the same second, the one odr did not
/// write: odr leaves one item per key after every write, so another item
/// beside it was written later.
enum ItemLayout {
  /// The attributes that name a key, in the order odr reads them.
  static let nameAttributes = ["key", "username", "account"]

  /// The attributes odr owns on an item; a provider's own (KeePassXC's
  /// Title, Path, …; a library's `application` or `xdg:schema`) are kept.
  static let ownedAttributes: Set<String> = ["service", "key", "username", "account", schemaAttribute, SecretServiceStore.catalogOriginsAttribute]

  /// The libsecret schema attribute and the schema keytar (and any
  /// libsecret client of the generic schema) looks items up in.
  static let schemaAttribute = "xdg:schema"
  static let genericSchema = "org.freedesktop.Secret.Generic"

  /// The attributes of key `name` of `service` (`extra`: a catalog
  /// token's origins).
  static func attributes(service: String, name: String, extra: [String: String] = [:]) -> [String: String] {
    var attributes = ["service": service, "key": name]
    if !KeyringInput.isRecord(name) {
      attributes["username"] = name
      attributes["account"] = name
      attributes[schemaAttribute] = genericSchema
    }
    return attributes.merging(extra) { $1 }
  }

  /// The searches that find every item of key `name`: one per naming
  /// attribute (odr's records: `key` only).
  static func searches(service: String, name: String) -> [[String: String]] {
    let names = KeyringInput.isRecord(name) ? ["key"] : nameAttributes
    return names.map { ["service": service, $0: name] }
  }

  /// The key an item of the service holds: its `key` (whatever it is:
  /// readers skip an invalid one with a warning), else its `username` or
  /// `account` when that is a valid key name (another library's credential
  /// for "alice@example.com" is none of odr's keys, and odr's records are
  /// found by `key` only, as ``searches(service:name:)`` looks them up).
  static func name(of attributes: [String: String]) -> String? {
    if let key = attributes["key"] { return key }
    for attribute in nameAttributes.dropFirst() {
      if let name = attributes[attribute] { return isValid(name) && !KeyringInput.isRecord(name) ? name : nil }
    }
    return nil
  }

  /// `existing` with odr's attributes replaced by `layout`, a provider's
  /// and other libraries' own kept: an item is in the layout when this
  /// leaves its attributes as they are.
  static func merged(_ existing: [String: String], with layout: [String: String]) -> [String: String] {
    existing.filter { !ownedAttributes.contains($0.key) }.merging(layout) { $1 }
  }

  /// Which of several items of one key is read (and kept): the most
  /// recently modified; of equals, one odr did not write (see the type's
  /// doc), then the first.
  static func preferred(_ items: [(attributes: [String: String], modified: UInt64)]) -> Int? {
    items.indices.max { a, b in
      let (x, y) = (items[a], items[b])
      if x.modified != y.modified { return x.modified < y.modified }
      let (odrX, odrY) = (writtenByODR(x.attributes), writtenByODR(y.attributes))
      if odrX != odrY { return odrX }
      return a > b
    }
  }

  /// Whether odr wrote the item, in this layout or an earlier one: it
  /// carries `key`, which no other library writes.
  static func writtenByODR(_ attributes: [String: String]) -> Bool { attributes["key"] != nil }

  private static func isValid(_ name: String) -> Bool {
    do { try KeyringInput.validate(name: name) } catch { return false }
    return true
  }
}
