import Foundation
import ODRConfiguration
import Synchronization
import Testing
import ODRTransports

/// odr.json `"auth"` at its own level: the token comes from the source the
/// program gave (the configuration links no keyring), asked for the
/// catalog's origin only, and never for plain http to another machine.
@Suite struct CatalogAuthTests {
  /// Answers every request with "tok", and records each.
  final class Recorder: CatalogTokenSource {
    let asked = Mutex<[String]>([])
    func catalogToken(named name: String, service: String, origin: String) async throws -> String {
      asked.withLock { $0.append("\(service) \(name) \(origin)") }
      return "tok"
    }
  }

  static func auth(_ json: String) throws -> ProjectFile.Auth {
    try JSONDecoder().decode(ProjectFile.Auth.self, from: Data(json.utf8))
  }

  @Test(arguments: [
    (#"{"key": "cdn", "service": "com.example.demo"}"#, "https://cdn.example/odr/", "com.example.demo cdn https://cdn.example:443", "Authorization", "Bearer tok"),
    (#"{"key": "cdn", "service": "com.example.demo", "header": "X-Token"}"#, "https://cdn.example:8443/odr/", "com.example.demo cdn https://cdn.example:8443", "X-Token", "tok"),
    (#"{"key": "cdn", "service": "com.example.demo", "scheme": "Token"}"#, "http://127.0.0.1:9/odr/", "com.example.demo cdn http://127.0.0.1:9", "Authorization", "Token tok"),
  ])
  func theTokenIsAskedForTheCatalogsOrigin(json: String, url: String, asked: String, header: String, value: String) async throws {
    let tokens = Recorder()
    let credential = try await CatalogAuth.credential(try Self.auth(json), for: URL(string: url)!, tokens: tokens)
    #expect(tokens.asked.withLock { $0 } == [asked])
    #expect(credential.header == header)
    #expect(credential.value == value)
  }

  @Test func noSourceOrPlainHTTPElsewhereIsRefusedBeforeAnyLookup() async throws {
    let auth = try Self.auth(#"{"key": "cdn", "service": "com.example.demo"}"#)
    let none = await #expect(throws: ConfigurationError.self) { try await CatalogAuth.credential(auth, for: URL(string: "https://cdn.example/")!, tokens: nil) }
    #expect(none?.message.contains("reads no keyring") == true)
    let tokens = Recorder()
    let plain = await #expect(throws: ConfigurationError.self) { try await CatalogAuth.credential(auth, for: URL(string: "http://cdn.example/")!, tokens: tokens) }
    #expect(plain?.message.contains("plain http") == true)
    #expect(tokens.asked.withLock { $0 }.isEmpty)
  }
}
