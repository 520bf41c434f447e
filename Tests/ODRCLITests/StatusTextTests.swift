import FoundationEssentials
@testable import ODRCommandLine
@testable import ODRResources
import Testing

/// `odr status` for a person: the title and notes, then one row per tag.
@Suite struct StatusTextTests {
  static let now = Date(timeIntervalSince1970: 1_800_000_000)

  static func tag(_ name: String, secrets: Bool = false, recipients: Int? = nil, onDisk: Bool, pins: [TagStatus.Pin] = [],
                  lastUse: Date? = nil) -> TagStatus {
    TagStatus(name: name, category: secrets ? "prefetch" : "onDemand", order: 0, preservationPriority: 0.5, secrets: secrets,
              recipients: recipients, files: 2, bytes: 3229, onDisk: onDisk, pins: pins.count, pinnedBy: pins, lastUse: lastUse)
  }

  @Test func eachTagIsARowWithEveryColumnFilled() {
    let pin = TagStatus.Pin(pid: 4242, command: "game", since: Self.now)
    let report = ODR.Status.Report(bundle: "com.example.demo", version: 3, store: "/s", checked: nil, tags: [
      Self.tag("Level2", onDisk: true, pins: [pin], lastUse: Self.now),
      Self.tag("APIKeys", secrets: true, recipients: 2, onDisk: false),
      Self.tag("Plain", secrets: true, onDisk: false),
    ], verification: nil)
    let (notes, table) = ODR.Status.text(report, now: Self.now)
    #expect(notes == ["com.example.demo version 3, store /s"])
    #expect(table.rendered(forTerminal: false) == """
      Level2\tonDemand\t2\t3.2 KiB\t0.5\ton disk\t-\t4242 (game)\t2027-01-15T08:00:00Z
      APIKeys\tprefetch\t2\t3.2 KiB\t0.5\tnot on disk\tencrypted to 2\t-\t-
      Plain\tprefetch\t2\t3.2 KiB\t0.5\tnever on disk\tplaintext\t-\t-

      """)
    #expect(table.rendered(forTerminal: true).hasPrefix("TAG      CATEGORY  FILES  SIZE     PRIORITY  STATE          SECRETS         PINNED BY    LAST USED\n"))
  }

  @Test func notesSayWhenTheHostLastConfirmedAndWhatWasVerified() {
    let report = ODR.Status.Report(bundle: "b", version: 1, store: "/s", checked: Self.now.addingTimeInterval(-7300), tags: [],
                                   verification: .init(checked: 7, damaged: [], damagedFiles: []))
    #expect(ODR.Status.text(report, now: Self.now).notes == [
      "b version 1, store /s",
      "the catalog kept on disk, last confirmed by its host 2 hours ago; `odr status --refresh` asks the host now",
      "verified: all 7 files in the store match their SHA-256",
    ])
  }
}
