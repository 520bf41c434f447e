@testable import ODRKeyring
import Testing

/// The item layout, as a table: what odr writes, what it reads as a key,
/// which of several items of one key wins.
@Suite struct ItemLayoutTests {
  @Test func aKeyCarriesEveryLibrarysNameAndARecordOnlyOdrs() {
    #expect(ItemLayout.attributes(service: "s", name: "Weather") == ["service": "s", "key": "Weather", "username": "Weather", "account": "Weather", "xdg:schema": "org.freedesktop.Secret.Generic"])
    #expect(ItemLayout.attributes(service: "s", name: "_odr.journal") == ["service": "s", "key": "_odr.journal"])
    #expect(ItemLayout.searches(service: "s", name: "W") == [["service": "s", "key": "W"], ["service": "s", "username": "W"], ["service": "s", "account": "W"]])
    #expect(ItemLayout.searches(service: "s", name: "_odr.metadata") == [["service": "s", "key": "_odr.metadata"]])
  }

  @Test(arguments: [
    (["service": "s", "key": "A", "username": "A"], "A"),
    (["service": "s", "username": "B", "application": "Python keyring library"], "B"),  // Python keyring, go-keyring, Rust
    (["service": "s", "account": "C", "xdg:schema": "org.freedesktop.Secret.Generic"], "C"),  // keytar
    (["service": "s", "key": "A", "username": "other"], "A"),  // odr's own name first
    (["service": "s", "username": "alice@example.com"], nil),  // another library's credential, not a key
    (["service": "s", "key": "bad name"], "bad name"),  // odr's attribute: readers skip it and say so
    (["service": "s", "username": "_odr.metadata"], nil),  // a record is odr's item only, never another library's
    (["service": "s"], nil),
  ] as [([String: String], String?)])
  func anItemHoldsTheKeyItsFirstNamingAttributeNames(attributes: [String: String], name: String?) {
    #expect(ItemLayout.name(of: attributes) == name)
  }

  @Test func mergingKeepsAProvidersAttributesAndReplacesOdrs() {
    let existing = ["service": "s", "username": "W", "application": "Python keyring library", "odr-catalog-origins": "https://a:443", "Title": "x"]
    #expect(ItemLayout.merged(existing, with: ItemLayout.attributes(service: "s", name: "W"))
      == ["service": "s", "key": "W", "username": "W", "account": "W", "xdg:schema": "org.freedesktop.Secret.Generic",
          "application": "Python keyring library", "Title": "x"])
  }

  @Test(arguments: [
    ([(odr, 5), (python, 4)], 0),  // newest wins
    ([(odr, 4), (python, 5)], 1),
    ([(odr, 5), (python, 5)], 1),  // same second: the one odr did not write
    ([(python, 5), (odr, 5)], 0),
    ([(python, 5), (keytar, 5)], 0),  // two others: the first
    ([(legacy, 5), (python, 5)], 1),  // odr's earlier layout is odr's too
    ([(odr, 1)], 0),
  ] as [([(attributes: [String: String], modified: UInt64)], Int)])
  func ofSeveralItemsTheNewestAndThenAnotherLibrarysWins(items: [(attributes: [String: String], modified: UInt64)], winner: Int) {
    #expect(ItemLayout.preferred(items) == winner)
  }

  static let odr = ItemLayout.attributes(service: "s", name: "W")
  static let python = ["service": "s", "username": "W", "application": "Python keyring library"]
  static let keytar = ["service": "s", "account": "W"]
  static let legacy = ["service": "s", "key": "W"]
}
