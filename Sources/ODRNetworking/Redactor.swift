import ODRKeyFormat

/// Replaces key values, in every form ``SecretForms`` knows (as they are,
/// percent-encoded in either case or as form data, JSON-escaped, base64…),
/// with `<redacted>` in any text about to leave the client. Free to make:
/// the matcher is built only when something is redacted.
struct Redactor: Sendable {
  private let values: [String]

  init(_ values: [String]) { self.values = values.filter { !$0.isEmpty } }

  func redact(_ text: String) -> String {
    values.isEmpty ? text : SecretMasker.redact(text, values: values, replacement: "<redacted>")
  }
}
