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
    let expected = Array("odr:\(token)".utf8)
    var given: [UInt8] = []
    if let header, let space = header.firstIndex(of: " "), header[..<space].lowercased() == "basic",
       let decoded = Data(base64Encoded: String(header[header.index(after: space)...].drop { $0 == " " })) {
      given = Array(decoded)
    }
    // The lengths are compared whole (truncating their difference to a byte
    // let `odr:<token>` followed by 256 more bytes through).
    var difference: UInt8 = given.count == expected.count ? 0 : 1
    for index in expected.indices {
      difference |= expected[index] ^ (index < given.count ? given[index] : 0)
    }
    return difference == 0
  }
}
