import FoundationEssentials

/// The run's proxy credentials: user `odr`, a random token, which only the
/// child's environment holds (in its proxy URLs). A request without them
/// is answered 407 with ``challenge``; they are compared in constant time.
public struct ProxyCredentials: Sendable {
  public let token: String

  /// The `Proxy-Authenticate` header of a 407.
  public static let challenge = (name: "Proxy-Authenticate", value: #"Basic realm="odr""#)

  /// New credentials: 32 letters and digits (about 190 bits).
  public init() {
    token = String(Placeholder().text.dropFirst(Placeholder.prefix.count))
  }

  public init(token: String) {
    self.token = token
  }

  /// True when `header` (a `Proxy-Authorization` value) is `Basic` with
  /// `odr:<token>`; the comparison takes the same time wherever the
  /// credentials differ.
  public func accepts(_ header: String?) -> Bool {
    var given: [UInt8] = []
    if let header, let space = header.firstIndex(of: " "), header[..<space].lowercased() == "basic",
       let decoded = Data(base64Encoded: String(header[header.index(after: space)...].drop { $0 == " " })) {
      given = Array(decoded)
    }
    return Self.equal(given, Array("odr:\(token)".utf8))
  }

  /// True when `given` is the token itself (a base URL's first path
  /// segment), compared in constant time.
  public func acceptsToken(_ given: String) -> Bool {
    Self.equal(Array(given.utf8), Array(token.utf8))
  }

  /// `given == expected`, taking the same time wherever they differ.
  private static func equal(_ given: [UInt8], _ expected: [UInt8]) -> Bool {
    // The lengths are compared whole (truncating their difference to a byte
    // let `odr:<token>` followed by 256 more bytes through).
    var difference: UInt8 = given.count == expected.count ? 0 : 1
    for index in expected.indices {
      difference |= expected[index] ^ (index < given.count ? given[index] : 0)
    }
    return difference == 0
  }
}
