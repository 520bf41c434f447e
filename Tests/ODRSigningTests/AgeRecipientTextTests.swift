import ODRBase
import ODRAge
import ODRSigning
import Testing

/// How recipients are read from text, and what a wrong one is told.
@Suite struct AgeRecipientTextTests {
  static let recipient = AgeIdentity().recipient.description

  @Test func aRecipientsFileTakesCommentsAfterARecipientAsAgeDoes() throws {
    let file = """
      # the team
      \(Self.recipient)  # laptop (alice)
      \(Self.recipient)\t# tab, then a comment

      """
    let parsed = try AgeRecipient.parseFile(file)
    #expect(parsed.recipients.map(\.description) == [Self.recipient, Self.recipient])
  }

  @Test(arguments: [
    (String(AgeRecipientTextTests.recipient.dropLast()) + (AgeRecipientTextTests.recipient.last == "q" ? "p" : "q"), "has a bad checksum"),  // one character mistyped
    (String(AgeRecipientTextTests.recipient.dropLast()), "has a bad checksum"),  // one lost
    ("ed25519:6Q4Vv1Pa0NmHjl2mWm6cGJg7wN9J2bQ9yQfV3m0dXxk=", "goes to --trust"),
    ("AGE-SECRET-KEY-1QQQQ", "never the identity itself"),
    ("hello", "Expected an age recipient"),
  ])
  func aWrongRecipientIsToldWhatItIs(text: String, words: String) {
    let error = #expect(throws: TrustError.self) { try AgeRecipient(text) }
    #expect(error?.message.contains(words) == true, "\(error?.message ?? "")")
  }
}
