public import FoundationEssentials
public import ODRBase

/// An APIKeys JSON document (docs/design.md, "APIKeys documents"), parsed and validated strictly.
///
/// Two forms are accepted. Flat:
/// ```json
/// { "Weather": "k-123", "Maps": "k-456" }
/// ```
/// Extended, with optional metadata per key:
/// ```json
/// { "keys": { "Weather": { "value": "k-123", "env": "WEATHER_API_KEY",
///                          "header": "X-Api-Key", "hosts": ["api.weather.example"] } } }
/// ```
/// Anything else is a ``KeysError`` that names the key and the problem and
/// never contains a value from the document; nothing is partially accepted.
public struct APIKeysDocument: Sendable, Equatable {
  /// The keys, sorted by name.
  public let keys: [APIKey]

  /// Creates a document from keys already validated elsewhere.
  public init(keys: [APIKey]) {
    self.keys = keys.sorted { $0.name < $1.name }
  }

  /// The key named `name`, if the document has it.
  public subscript(name: String) -> APIKey? { keys.first { $0.name == name } }

  /// The largest document read (values are at most 64 KiB each).
  static let maxBytes = 16 << 20

  /// Parses `data`, refusing anything that breaks the rules.
  public static func parse(_ data: Data) throws(KeysError) -> APIKeysDocument {
    // odr's strict reader first (bounded; syntax, then one meaning per key), then the tree.
    do {
      try JSONReader.check([UInt8](data), limit: maxBytes, refusingDuplicateKeys: false)
      _ = try JSONReader.keys(of: [UInt8](data), limit: maxBytes)
    } catch {
      guard case .duplicateKey(let key, let object) = error.kind else {
        throw invalid(error.kind == .syntax ? "The document is not JSON." : "The document is not JSON odr reads (\(error.message)).")
      }
      let place = object.split(separator: ".").last.map { $0 == "keys" || object == "the top level" ? "" : " of key '\($0)'" } ?? ""
      throw invalid("'\(shown(key))' appears twice\(place); each name may appear once.")
    }
    // (the reader accepted it: the decoder reads the same strict JSON)
    guard let root = dropping(.isTheAnswer, { try JSONDecoder().decode(JSONValue.self, from: data) }) else {
      throw invalid("The document is not JSON.")
    }
    guard case .object(let top) = root else {
      throw invalid("The document must be a JSON object, {\"Name\": \"value\", …} or {\"keys\": {…}}, not \(root.kind).")
    }
    let keys: [APIKey]
    if case .object(let extended)? = top["keys"] {
      if let stray = top.keys.sorted().first(where: { $0 != "keys" }) {
        throw invalid("Unknown top-level field '\(shown(stray))' beside \"keys\" in the extended form.")
      }
      keys = try extended.map { name, entry throws(KeysError) in try parseExtended(name: name, entry) }
    } else {
      keys = try top.map { name, value throws(KeysError) in
        try validate(name: name)
        return APIKey(name: name, value: try validate(value: value, of: name))
      }
    }
    if keys.isEmpty { throw invalid("The document holds no keys.") }
    for key in keys.sorted(by: { $0.name < $1.name }) {
      if let refusal = VariableName.refusal(VariableName.of(key)) {
        throw invalid("Key '\(key.name)': \(refusal), so a pack may not set it. Give the key another \"env\" (such as \(VariableName.upperSnakeCase(key.name).filter { $0.isLetter || $0.isNumber })_API_KEY).")
      }
    }
    return APIKeysDocument(keys: keys)
  }

  // MARK: Validation

  static let metadataFields = ["value", "env", "header", "scheme", "query", "hosts", "insecure", "placeholder", "headers", "basic"]

  private static func parseExtended(name: String, _ entry: JSONValue) throws(KeysError) -> APIKey {
    try validate(name: name)
    guard case .object(let fields) = entry else {
      throw invalid("Key '\(name)': in the extended form each key is an object with a \"value\", not \(entry.kind).")
    }
    if let unknown = fields.keys.sorted().first(where: { !metadataFields.contains($0) }) {
      throw invalid("Key '\(name)': unknown field '\(shown(unknown))' (known: \(metadataFields.joined(separator: ", "))).")
    }
    guard let value = fields["value"] else { throw invalid("Key '\(name)': the \"value\" field is missing.") }
    var metadata = KeyMetadata(
      env: try string(fields["env"], "env", of: name, rule: isEnvironmentName,
                      help: "an environment variable name ([A-Za-z_][A-Za-z0-9_]*)"),
      header: try string(fields["header"], "header", of: name, rule: isToken, help: "an HTTP header name"),
      scheme: try string(fields["scheme"], "scheme", of: name, rule: isToken, help: "an auth scheme such as Bearer"),
      query: try string(fields["query"], "query", of: name, rule: isQueryName,
                        help: "a query parameter name (letters, digits, '_', '.', '-', '~')"),
      hosts: try hosts(fields["hosts"], of: name),
      insecure: try flag(fields["insecure"], "insecure", of: name))
    metadata.placeholder = try string(fields["placeholder"], "placeholder", of: name, rule: isPlaceholderPrefix,
                                      help: "the prefix odr exec --proxy keeps in the key's placeholder, up to 16 letters, digits, '-' and '_'")
    metadata.headers = try headers(fields["headers"], of: name)
    metadata.basic = try basic(fields["basic"], of: name)
    if (metadata.header != nil || metadata.headers != nil || metadata.basic != nil) && metadata.query != nil {
      throw invalid("Key '\(name)': set headers (\"header\", \"headers\", \"basic\") or \"query\", not both; a key is sent one way.")
    }
    if metadata.scheme != nil && metadata.header == nil {
      throw invalid("Key '\(name)': \"scheme\" needs a \"header\" to go in.")
    }
    return APIKey(name: name, value: try validate(value: value, of: name), metadata: metadata)
  }

  private static func validate(name: String) throws(KeysError) {
    if let problem = KeyName.problem(userKeyName: name) { throw invalid(problem) }
  }

  private static func validate(value: JSONValue, of name: String) throws(KeysError) -> String {
    guard case .string(let text) = value else {
      throw invalid("Key '\(name)': the value must be a string, not \(value.kind).")
    }
    if let problem = KeyName.valueProblem(text, for: name) { throw invalid(problem) }
    if text.utf8.contains(0) {
      throw invalid("Key '\(name)': the value contains a NUL character, which environment variables and many programs cannot carry.")
    }
    return text
  }

  /// An optional metadata string, checked by `rule`. Its content is never
  /// echoed: a secret pasted into the wrong field must not reach a log.
  private static func string(_ value: JSONValue?, _ field: String, of name: String,
                             rule: (String) -> Bool, help: String) throws(KeysError) -> String? {
    guard let value else { return nil }
    guard case .string(let text) = value, rule(text) else {
      throw invalid("Key '\(name)': \"\(field)\" must be \(help).")
    }
    return text
  }

  private static func flag(_ value: JSONValue?, _ field: String, of name: String) throws(KeysError) -> Bool? {
    guard let value else { return nil }
    guard case .bool(let flag) = value else { throw invalid("Key '\(name)': \"\(field)\" must be true or false.") }
    return flag
  }

  private static func hosts(_ value: JSONValue?, of name: String) throws(KeysError) -> [String]? {
    guard let value else { return nil }
    guard case .array(let items) = value, !items.isEmpty else {
      throw invalid("Key '\(name)': \"hosts\" must be a non-empty array of host names.")
    }
    var hosts: [String] = []
    for item in items {
      guard case .string(let host) = item, KeyHost(host) != nil else {
        throw invalid("Key '\(name)': every entry of \"hosts\" must be a host name such as api.example.com, one with a port such as localhost:8080, or a dot and a domain for every name under it such as .amazonaws.com (lowercase, no scheme or path).")
      }
      hosts.append(host)
    }
    return hosts
  }

  private static func isEnvironmentName(_ s: String) -> Bool {
    s.utf8.count <= 255 && VariableName.isPortable(s)
  }

  /// An HTTP token (RFC 9110 §5.6.2).
  private static func isToken(_ s: String) -> Bool {
    !s.isEmpty && s.utf8.count <= 256 && s.utf8.allSatisfy { isASCIILetterOrDigit($0) || "!#$%&'*+-.^_`|~".utf8.contains($0) }
  }

  private static func headers(_ value: JSONValue?, of name: String) throws(KeysError) -> [String]? {
    guard let value else { return nil }
    guard case .array(let items) = value, !items.isEmpty, items.count <= 16 else {
      throw invalid("Key '\(name)': \"headers\" must be a non-empty array (at most 16) of headers such as \"x-api-key\" or \"Authorization: Bearer\".")
    }
    var headers: [String] = []
    for item in items {
      guard case .string(let entry) = item, KeyMetadata.HeaderPlace(entry) != nil else {
        throw invalid("Key '\(name)': every entry of \"headers\" must be a header name, or one with its scheme such as \"Authorization: Bearer\".")
      }
      headers.append(entry)
    }
    return headers
  }

  /// `"basic": true` (any user) or the user's name: the key is the password
  /// of `Authorization: Basic`.
  private static func basic(_ value: JSONValue?, of name: String) throws(KeysError) -> String? {
    switch value {
    case nil: return nil
    case .bool(true)?: return ""
    case .string(let user)? where !user.isEmpty && user.utf8.count <= 256 && user.utf8.allSatisfy({ $0 > 0x20 && $0 != 0x7f && $0 != UInt8(ascii: ":") }):
      return user
    default: throw invalid("Key '\(name)': \"basic\" must be true (any user) or the user's name (no ':', spaces or control characters).")
    }
  }

  private static func isPlaceholderPrefix(_ s: String) -> Bool {
    !s.isEmpty && s.utf8.count <= 16 && s.utf8.allSatisfy { isASCIILetterOrDigit($0) || $0 == UInt8(ascii: "-") || $0 == UInt8(ascii: "_") }
  }

  private static func isQueryName(_ s: String) -> Bool {
    !s.isEmpty && s.utf8.count <= 256 && s.utf8.allSatisfy { isASCIILetterOrDigit($0) || "_.-~".utf8.contains($0) }
  }

  private static func isASCIILetterOrDigit(_ b: UInt8) -> Bool {
    (0x30...0x39).contains(b) || (0x41...0x5a).contains(b) || (0x61...0x7a).contains(b)
  }

  private static func invalid(_ message: String) -> KeysError {
    KeysError(.invalidDocument, "Invalid APIKeys document: \(message) Nothing was imported.")
  }

  /// A name from the document, shortened for a message.
  private static func shown(_ s: String) -> String {
    let printable = String(s.unicodeScalars.filter { $0.value >= 0x20 && $0.value != 0x7f })
    return printable.count > 40 ? String(printable.prefix(40)) + "…" : printable
  }
}

extension APIKeysDocument {
  /// Every key of `documents` (each named by its path, for messages),
  /// refusing a name defined twice.
  public static func keys(of documents: [(path: String, data: Data)]) throws -> [String: APIKey] {
    var keys: [String: APIKey] = [:]
    var origin: [String: String] = [:]
    for (path, data) in documents {
      let document: APIKeysDocument
      do { document = try APIKeysDocument.parse(data) } catch {
        throw KeysError(.invalidDocument, "\(path): \(error.message)", underlying: error)
      }
      for key in document.keys {
        if let first = origin.updateValue(path, forKey: key.name) {
          throw KeysError(.invalidDocument, "Key '\(key.name)' is defined in both \(first) and \(path). Nothing was imported.")
        }
        keys[key.name] = key
      }
    }
    return keys
  }
}
