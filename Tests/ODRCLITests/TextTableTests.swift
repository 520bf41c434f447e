@testable import ODRCommandLine
import Testing

/// Listings: aligned under a header on a terminal, tab-separated when piped.
@Suite struct TextTableTests {
  static let table = TextTable(header: ["NAME", "RECIPIENT"], rows: [["laptop", "age1abc"], ["ci", "age1defg"]])

  @Test func aTerminalGetsAlignedColumnsUnderAHeader() {
    #expect(Self.table.rendered(forTerminal: true) == "NAME    RECIPIENT\nlaptop  age1abc\nci      age1defg\n")
  }

  @Test func aPipeGetsTabSeparatedRowsAndNoHeader() {
    #expect(Self.table.rendered(forTerminal: false) == "laptop\tage1abc\nci\tage1defg\n")
  }

  @Test func controlCharactersInACellAreEscapedNotPassedOn() {
    let table = TextTable(header: ["NAME", "COMMAND"], rows: [["4242", "evil\t\u{1b}[2J\nforged\trow"]])
    #expect(table.rendered(forTerminal: false) == "4242\tevil\\t\\u{1B}[2J\\nforged\\trow\n")
    #expect(!table.rendered(forTerminal: true).contains("\u{1b}"))
  }
}
