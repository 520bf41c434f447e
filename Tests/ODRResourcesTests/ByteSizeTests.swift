import ODRCatalog
import ODRTesting
import Testing

@Suite(.enabled(if: TestSelection.untagged), .timeLimit(.minutes(1))) struct ByteSizeTests {
  static let read: [(String, Int64)] = [
    ("4096", 4096), ("0", 0), ("10B", 10), ("500M", 524_288_000), ("500m", 524_288_000), ("1.5G", 1_610_612_736),
    ("1GB", 1_000_000_000), ("10MiB", 10_485_760), ("2T", 2_199_023_255_552), ("100KB", 100_000), ("100K", 102_400),
    ("1.5 GiB", 1_610_612_736), ("1024P", 1_152_921_504_606_846_976), ("0.5K", 512),
  ]

  @Test(arguments: read)
  func sizesAreRead(_ text: String, _ bytes: Int64) {
    #expect(ByteSize.parse(text) == bytes)
  }

  @Test(arguments: ["", "M", "1.5.2G", "-5M", "5Q", "1025P", ".5G", "5.", "1e9", "99999999999999999999"])
  func nonSizesAreRefused(_ text: String) {
    #expect(ByteSize.parse(text) == nil)
    #expect(ByteSize.exceedsMaximum(text) == ["1025P", "99999999999999999999"].contains(text))
  }

  static let shown: [(Int64, String)] = [
    (0, "0 bytes"), (1, "1 byte"), (1023, "1023 bytes"), (1024, "1.0 KiB"), (52_428_800, "50.0 MiB"), (1_610_612_736, "1.5 GiB"),
    (81_920, "80.0 KiB"), (102_400, "100.0 KiB"), (1_152_921_504_606_846_976, "1.0 EiB"),
  ]

  @Test(arguments: shown)
  func sizesAreShown(_ bytes: Int64, _ text: String) {
    #expect(ByteSize.format(bytes) == text)
  }
}
