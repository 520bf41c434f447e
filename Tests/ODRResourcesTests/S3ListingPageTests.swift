import ODRTransports
import Testing

/// ListObjectsV2 pages as S3 (and moto, MinIO) write them: keys, the
/// continuation token, XML's escapes; and what is refused.
@Suite struct S3ListingPageTests {
  static func page(_ body: String) -> [UInt8] {
    Array(#"<?xml version="1.0" encoding="UTF-8"?><ListBucketResult xmlns="http://s3.amazonaws.com/doc/2006-03-01/">\#(body)</ListBucketResult>"#.utf8)
  }

  @Test(arguments: [
    ("<Name>b</Name><Contents><Key>odr/blobs/aa</Key><Size>3</Size></Contents><Contents><Key>odr/blobs/bb</Key></Contents><IsTruncated>false</IsTruncated>",
     S3ListingPage(keys: ["odr/blobs/aa", "odr/blobs/bb"], next: nil)),
    ("<IsTruncated>true</IsTruncated><NextContinuationToken>1a&amp;b=</NextContinuationToken><Contents><Key>k</Key></Contents>",
     S3ListingPage(keys: ["k"], next: "1a&b=")),
    ("<Contents><Key>a&lt;b&gt;&quot;&apos;&#x41;&#66;</Key></Contents>", S3ListingPage(keys: ["a<b>\"'AB"], next: nil)),
    ("<KeyCount>0</KeyCount><IsTruncated>false</IsTruncated>", S3ListingPage(keys: [], next: nil)),
  ])
  func aPageGivesItsKeysAndTheNextToken(body: String, expected: S3ListingPage) throws {
    #expect(try S3ListingPage(Self.page(body)) == expected)
  }

  @Test(arguments: [
    "<IsTruncated>true</IsTruncated>",  // more pages, but no way to ask for them
    "<Contents><Key>a&unknown;</Key></Contents>",
    "<Contents><Key>a&amp</Key></Contents>",
    "<Contents><Key>&#x110000;</Key></Contents>",
    String(repeating: "<Contents><Key>k</Key></Contents>", count: S3ListingPage.maxKeys + 1),
  ])
  func aPageThatCannotBeReadIsRefused(body: String) {
    #expect(throws: S3ListingPage.Refusal.self) { try S3ListingPage(Self.page(body)) }
  }

  @Test func aPageOverTheLimitIsRefusedUnread() {
    #expect(throws: S3ListingPage.Refusal.self) { try S3ListingPage([UInt8](repeating: 0x20, count: S3ListingPage.maxBytes + 1)) }
  }
}
