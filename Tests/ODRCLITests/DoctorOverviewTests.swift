@testable import ODRCommandLine
import Testing

/// `odr doctor`'s overview as text: names from the keyring, which any
/// program of the user may write, reach the terminal escaped.
@Suite struct DoctorOverviewTests {
  @Test func namesFromTheKeyringAreEscaped() {
    var overview = DoctorOverview(store: "secret-service")
    overview.identities = [.init(name: "evil\u{1b}]0;owned\u{07}\nforged", recipients: ["age1abc"])]
    let text = overview.lines.joined(separator: "\n")
    #expect(!text.contains("\u{1b}") && !text.contains("\u{07}") && !text.contains("\nforged"), "\(text)")
    #expect(text.contains("  evil\\u{1B}]0;owned\\u{07}\\nforged  age1abc"), "\(text)")
  }
}
