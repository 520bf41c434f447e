import Foundation
/// Replaces key values — as they are and percent-encoded — with
/// `<redacted>` in any text about to leave the client.
/// Free to make: the forms are worked out only when something is redacted.
struct Redactor: Sendable {
  private let values: [String]

  init(_ values: [String]) { self.values = values.filter { !$0.isEmpty } }

  func redact(_ text: String) -> String {
    let forms = Set(values.flatMap { [$0, APIClient.percentEncoded($0)] }).sorted { $0.count > $1.count }
    return forms.reduce(text) { $0.replacingOccurrences(of: $1, with: "<redacted>") }
  }
}
