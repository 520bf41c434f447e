/// Replaces key values — as they are and percent-encoded — with
/// `<redacted>` in any text about to leave the client.
struct Redactor: Sendable {
  private let forms: [String]

  init(_ values: [String]) {
    forms = Set(values.filter { !$0.isEmpty }.flatMap { [$0, APIClient.percentEncoded($0)] }).sorted { $0.count > $1.count }
  }

  func redact(_ text: String) -> String {
    forms.reduce(text) { $0.replacingOccurrences(of: $1, with: "<redacted>") }
  }
}
