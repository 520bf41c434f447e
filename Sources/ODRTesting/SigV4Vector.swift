public import Foundation
import ODRBase

/// One case of the AWS SigV4 signing test suite (awslabs/aws-c-auth,
/// tests/aws-signing-test-suite/v4, Apache-2.0; Tests/Vectors/sigv4): its
/// context and files, and requests parsed from them. The signer
/// (`SigV4SuiteTests`) and the proxy's re-signing (`SigV4ResignerTests`)
/// are both held to it.
public struct SigV4Vector: Sendable, CustomStringConvertible {
  public static let folder = Paths.packageRoot.appending(path: "Tests/Vectors/sigv4")

  /// The names of the suite's cases, sorted.
  public static let names: [String] = dropping(.isTheAnswer) { try FileManager.default.contentsOfDirectory(atPath: folder.path) }?  // none: theSuiteHasItsCases fails
    .filter { FileManager.default.fileExists(atPath: folder.appending(path: "\($0)/context.json").path) }.sorted() ?? []

  public struct Context: Sendable, Decodable {
    public struct Credentials: Sendable, Decodable {
      public var access_key_id: String
      public var secret_access_key: String
      public var token: String?
    }
    public var credentials: Credentials
    public var region: String
    public var service: String
    public var timestamp: String
    public var normalize: Bool
    public var sign_body: Bool
    public var omit_session_token: Bool?
  }

  /// A request as a file of the suite writes it.
  public struct Request: Sendable {
    public var method: String
    /// The path and query, as on the request line.
    public var target: String
    public var headers: [(String, String)]
    public var body: String

    /// The target's path and query (without `?`; empty for none).
    public var path: String { String(target.prefix { $0 != "?" }) }
    public var query: String { target.firstIndex(of: "?").map { String(target[target.index(after: $0)...]) } ?? "" }
  }

  public let name: String
  public let context: Context
  public var description: String { name }

  public init(_ name: String) throws {
    self.name = name
    context = try JSONDecoder().decode(Context.self, from: Data(contentsOf: Self.folder.appending(path: "\(name)/context.json")))
  }

  /// The text of one of the case's files.
  public func file(_ file: String) throws -> String {
    try String(contentsOf: Self.folder.appending(path: "\(name)/\(file)"), encoding: .utf8)
  }

  /// A request file (`request.txt`, `header-signed-request.txt`, …): the
  /// request line, headers (a line starting with white space continues the
  /// previous one), a blank line, the body.
  public func request(_ file: String) throws -> Request {
    let text = try self.file(file)
    let (head, body) = text.range(of: "\n\n").map { (String(text[..<$0.lowerBound]), String(text[$0.upperBound...])) } ?? (text, "")
    var lines = head.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
    let requestLine = lines.removeFirst()
    guard let method = requestLine.split(separator: " ").first else { throw TestFailure("\(name)/\(file): no request line") }
    let target = String(requestLine.dropFirst(method.count + 1).dropLast(" HTTP/1.1".count))
    var headers: [(String, String)] = []
    for line in lines where !line.isEmpty {
      if line.first == " " || line.first == "\t", !headers.isEmpty {
        headers[headers.count - 1].1 += "\n" + line
      } else {
        guard let colon = line.firstIndex(of: ":") else { throw TestFailure("\(name)/\(file): a header line without ':'") }
        headers.append((String(line[..<colon]), String(line[line.index(after: colon)...])))
      }
    }
    return Request(method: String(method), target: target, headers: headers, body: body)
  }
}
