import Foundation
import FoundationEssentials
import ODRKeyFormat
import ODRTesting
import Testing

@Suite(.enabled(if: TestSelection.untagged), .timeLimit(.minutes(2))) struct SecretMaskerTests {
  let secret = "sk-live-8f3Kq9Zx"

  /// Feeds `text` in the given chunk sizes and returns what comes out.
  func masked(_ text: String, values: [String], chunks: [Int]? = nil) -> String {
    var masker = SecretMasker(values: values)
    let bytes = Array(text.utf8)
    var output: [UInt8] = []
    var offset = 0
    for size in chunks ?? [bytes.count] where offset < bytes.count {
      let end = min(bytes.count, offset + size)
      output += masker.mask(bytes[offset..<end])
      offset = end
    }
    if offset < bytes.count { output += masker.mask(bytes[offset...]) }
    output += masker.finish()
    return String(decoding: output, as: UTF8.self)
  }

  @Test func masksTheValueAndLeavesOtherTextAlone() {
    #expect(masked("key=\(secret) done", values: [secret]) == "key=*** done")
    #expect(masked("nothing secret here sk-live-8f3 ok", values: [secret]) == "nothing secret here sk-live-8f3 ok")
    #expect(masked("\(secret)\(secret)", values: [secret]) == "******")
  }

  @Test func masksAValueSplitAtEveryBoundary() {
    let text = "before \(secret) after\n"
    for split in 1..<Array(text.utf8).count {
      #expect(masked(text, values: [secret], chunks: [split]) == "before *** after\n", "split at \(split)")
    }
    // One byte at a time.
    #expect(masked(text, values: [secret], chunks: Array(repeating: 1, count: text.utf8.count)) == "before *** after\n")
  }

  @Test func aHeldBackPrefixThatIsNoSecretIsWrittenLater() {
    var masker = SecretMasker(values: [secret])
    #expect(masker.mask(Array("log sk-live".utf8)) == Array("log ".utf8))
    #expect(masker.mask(Array("ly\n".utf8)) == Array("sk-lively\n".utf8))
    #expect(masker.mask(Array("tail sk-".utf8)) == Array("tail ".utf8))
    #expect(masker.finish() == Array("sk-".utf8))
  }

  @Test func masksBase64FormsAtAnyOffset() {
    let plain = Data(secret.utf8)
    #expect(masked(plain.base64EncodedString(), values: [secret]) == "***")
    // Inside a Basic auth header, the value sits 0, 1 or 2 bytes into a group.
    for user in ["", "u:", "us:", "use:"] {
      let header = "Authorization: Basic " + Data((user + secret + ":x").utf8).base64EncodedString()
      #expect(!masked(header, values: [secret]).contains(String(Data(secret.utf8).base64EncodedString().prefix(8))))
      let encoded = Data((user + secret).utf8).base64EncodedString()
      let out = masked(encoded, values: [secret])
      #expect(out.contains("***"), "prefix \(user): \(out)")
      #expect(out.count <= encoded.count - 12, "prefix \(user): \(out)")
    }
    let url = Data("\u{fb}\u{ff}\(secret)?>".utf8).base64EncodedString().replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_")
    #expect(masked(url, values: ["\u{fb}\u{ff}\(secret)?>"]) == "***")
  }

  @Test func masksPercentAndJSONEncodedForms() {
    let value = "p@ss word/+&=ü\"x"
    #expect(masked("q=p%40ss%20word%2F%2B%26%3D%C3%BC%22x&z", values: [value]) == "q=***&z")
    #expect(masked("q=p%40ss+word%2F%2B%26%3D%C3%BC%22x", values: [value]) == "q=***")
    #expect(masked("q=p%40ss%20word%2f%2b%26%3d%c3%bc%22x", values: [value]) == "q=***")
    #expect(masked(#"{"k":"p@ss word\/+&=ü\"x"}"#, values: [value]) == #"{"k":"***"}"#)
    #expect(masked(#"{"k":"p@ss word/+&=ü\"x"}"#, values: [value]) == #"{"k":"***"}"#)
  }

  /// S3's SignatureDoesNotMatch answer quotes the canonical request it
  /// expected as hex bytes (CanonicalRequestBytes), a session token in it.
  @Test func masksHexFormsWholeAndAsSpacedBytes() {
    let hex = secret.utf8.map { String(format: "%02x", $0) }
    #expect(masked("<B>47 45 54 0a \(hex.joined(separator: " ")) 0a</B>", values: [secret]) == "<B>47 45 54 0a *** 0a</B>")
    #expect(masked("x=\(hex.joined().uppercased())", values: [secret]) == "x=***")
    #expect(masked("x=\(hex.joined())", values: [secret], chunks: [5, 3, 7]) == "x=***")
  }

  @Test func masksEachLongLineOfAMultiLineValue() {
    let pem = "-----BEGIN KEY-----\nMIIBVwIBADANBgkqhkiG9w0BAQEFAASCAUEwggE9\n-----END KEY-----"
    let out = masked("line: MIIBVwIBADANBgkqhkiG9w0BAQEFAASCAUEwggE9\n", values: [pem])
    #expect(out == "line: ***\n")
  }

  @Test func theLongestFormWinsSoNoTailLeaks() {
    #expect(masked("x abcdef y", values: ["abc", "abcdef"]) == "x *** y")
    #expect(masked("x abcdef y", values: ["abc", "abcdef"], chunks: [5]) == "x *** y")
    #expect(masked("x abc y", values: ["abc", "abcdef"], chunks: [5]) == "x *** y")
  }

  /// What real tools print for `value`, by Python expressions over `v`,
  /// in one run of Python.
  func printed(_ expressions: [String], _ value: String) async throws -> [String] {
    let script = "import sys, base64, json, re, urllib.parse; v = sys.stdin.read(); json.dump([\(expressions.joined(separator: ", "))], sys.stdout)"
    let result = try await Command.run("/usr/bin/python3", ["-c", script], input: value)
    try #require(result.status == 0, "\(result.stderr)")
    let texts = try JSONDecoder().decode([String].self, from: Data(result.stdout.utf8))
    try #require(texts.count == expressions.count)
    return texts
  }

  @Test func wrappedBase64LeavesNoLineOfTheKey() async throws {
    let key = "sk-live-" + String(repeating: "Ab9x", count: 30)
    let tools = [
      "base64.encodebytes(v.encode()).decode()",                        // MIME / coreutils: 76 columns
      "base64.encodebytes(v.encode()).decode().replace('\\n', '\\r\\n')",
      "'\\n'.join(base64.b64encode(v.encode()).decode()[i:i+64] for i in range(0, 200, 64))",  // openssl / PEM: 64
    ]
    for (tool, text) in zip(tools, try await printed(tools, key)) {
      let out = masked(text, values: [key])
      let lines = out.split(whereSeparator: \.isNewline).map { $0.trimmingCharacters(in: .whitespaces) }
      #expect(lines.count > 1 && lines.allSatisfy { $0 == "***" || $0.count < 8 }, "\(tool): \(out)")
    }
  }

  @Test func pythonsQuoteAndJSONEscapesAndFormEncodingAreMasked() async throws {
    let value = "pä/ss wörd+1"
    let tools = ["urllib.parse.quote(v)", "urllib.parse.quote_plus(v)", "urllib.parse.quote(v).lower()", "json.dumps(v)",
                 "json.dumps(v, ensure_ascii=False)", "re.sub(r'u00[0-9a-f]{2}', lambda m: m.group().upper().replace('U', 'u'), json.dumps(v))"]
    for (tool, text) in zip(tools, try await printed(tools.map { "'x=' + \($0) + ';'" }, value)) {
      #expect(masked(text, values: [value]).hasSuffix("***;") || masked(text, values: [value]).hasSuffix("***\";"),
              "\(tool): \(text) -> \(masked(text, values: [value]))")
    }
  }

  @Test func colourCodesInsideAValueDoNotHideIt() {
    let coloured = "sk-live-\u{1b}[1;31m8f3K\u{1b}[0mq9Zx"
    #expect(masked("token \(coloured) end", values: [secret]) == "token *** end")
    #expect(masked("token \(coloured) end", values: [secret], chunks: [11]) == "token *** end")
    #expect(masked("\u{1b}[32mok\u{1b}[0m", values: [secret]) == "\u{1b}[32mok\u{1b}[0m")
  }

  /// A terminal takes `ESC [` then parameter bytes and one final byte as a
  /// sequence, and shows the rest: a value right after a bare `ESC [` (or
  /// any other escape prefix) shows all but its first bytes unless it is
  /// matched as the bytes are, escapes included.
  @Test(arguments: ["\u{1b}[", "\u{1b}[1;", "\u{1b}", "\u{1b}[?25", "\u{1b}]0;"])
  func aValueRightAfterAnEscapePrefixIsMasked(prefix: String) {
    for chunks in [nil, [1], [3]] as [[Int]?] {
      let out = masked("a\(prefix)\(secret) b", values: [secret], chunks: chunks)
      #expect(!out.contains("k-live-8f3Kq9Zx") && !out.contains("8f3Kq9Zx"), "\(prefix.debugDescription): \(out.debugDescription)")
      #expect(out.hasSuffix("*** b"), "\(prefix.debugDescription): \(out.debugDescription)")
    }
    let digits = "12345678abcdefgh"  // digits are CSI parameters, 'a' its final byte
    #expect(masked("\u{1b}[\(digits)!", values: [digits]) == "\u{1b}[***!")
  }

  /// What is held back because it may begin a value is written by flush():
  /// a prompt ending in "s" (the first byte of the value) shows. If the
  /// value then completes, what is not written yet of it is masked.
  @Test func flushWritesWhatWasHeldBackAndTheStreamGoesOn() {
    var masker = SecretMasker(values: [secret])
    #expect(masker.mask(Array("Continue? yes".utf8)) == Array("Continue? ye".utf8))
    #expect(masker.heldCount == 1)
    #expect(masker.flush() == Array("s".utf8))
    #expect(masker.heldCount == 0)
    #expect(masker.mask(Array("\rprogress 10% sk-li".utf8)) == Array("\rprogress 10% ".utf8))
    #expect(masker.flush() == Array("sk-li".utf8))
    #expect(masker.mask(Array("ve-8f3Kq9Zx done".utf8)) == Array("*** done".utf8))
    #expect(masker.finish() == [])
  }

  @Test func redactionUsesEveryForm() {
    let value = "p@ss/wörd x"
    for text in ["p%40ss%2fw%c3%b6rd%20x", "p%40ss%2Fw%C3%B6rd+x", #"p@ss\/wörd x"#, Data(value.utf8).base64EncodedString()] {
      #expect(SecretMasker.redact("before \(text) after", values: [value], replacement: "<redacted>") == "before <redacted> after", "\(text)")
    }
  }

  @Test func manyKeysMaskLikeOne() {
    let keys = (0..<200).map { "key-\($0)-\(UUID().uuidString)" }
    let text = keys.enumerated().map { "line \($0.offset): \($0.element) and \(Data($0.element.utf8).base64EncodedString())\n" }.joined()
    let out = masked(text, values: keys, chunks: [4096])
    #expect(out == (0..<200).map { "line \($0): *** and ***\n" }.joined())
  }
}

/// Each value with a replacement of its own (`odr exec --proxy`: a value
/// comes back as its placeholder).
@Suite(.enabled(if: TestSelection.untagged)) struct SecretMaskerReplacementTests {
  func masked(_ text: String, _ pairs: [(value: String, replacement: String)], chunk: Int? = nil) -> String {
    var masker = SecretMasker(replacing: pairs)
    let bytes = Array(text.utf8)
    var output: [UInt8] = []
    for start in stride(from: 0, to: bytes.count, by: chunk ?? max(1, bytes.count)) {
      output += masker.mask(bytes[start..<min(bytes.count, start + (chunk ?? bytes.count))])
    }
    return String(decoding: output + masker.finish(), as: UTF8.self)
  }

  static let pairs = [(value: "w-secret/1", replacement: "odr_W"), (value: "m s&cret", replacement: "odr_M")]

  @Test(arguments: [
    ("key=w-secret/1 and m s&cret", "key=odr_W and odr_M"),
    ("b64 \(Data("w-secret/1".utf8).base64EncodedString()) pct m%20s%26cret", "b64 odr_W pct odr_M"),
    ("none here", "none here"),
  ])
  func eachValueBecomesItsOwnReplacementInEveryForm(text: String, expected: String) {
    #expect(masked(text, Self.pairs) == expected)
    #expect(masked(text, Self.pairs, chunk: 1) == expected)
  }

  @Test func overlappingMatchesTakeTheLongerOnesReplacement() {
    let pairs = [(value: "abcdef", replacement: "<B>"), (value: "bcd", replacement: "<A>")]
    #expect(masked("xabcdefy", pairs) == "x<B>y")
    #expect(masked("xbcdy", pairs) == "x<A>y")
    #expect(masked("xabcdefy", pairs.reversed(), chunk: 1) == "x<B>y")
  }

  @Test func oneReplacementForAllIsWhatItWas() {
    #expect(SecretMasker.redact("a w-secret/1 m s&cret", values: Self.pairs.map(\.value), replacement: "***") == "a *** ***")
  }
}
