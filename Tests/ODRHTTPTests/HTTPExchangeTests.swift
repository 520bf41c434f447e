import Foundation
import ODRBase
import ODRCatalog
@testable import ODRHTTP
import ODRTesting
import ODRTransports
import Testing

/// API calls (STS, KMS, GitHub's OIDC token) on odr's transport: the whole
/// answer, bounded in size and in time, never a redirect.
@Suite(.enabled(if: TestSelection.untagged), .timeLimit(.minutes(1))) struct HTTPExchangeTests {
  @Test func anAnswerIsWholeBoundedAndNotRedirected() async throws {
    try await TestHTTPServer.answering({ request in
      switch request.path {
      case "/big": .text(String(repeating: "x", count: 2_000))
      case "/moved": TestHTTPServer.Reply(status: 302, headers: ["Location": "/ok"])
      default: .text("answer to \(request.method) with \(request.body.count) bytes")
      }
    }) { server in
      let transport = HTTPTransport()
      let ok = try await transport.exchange(HTTPExchangeRequest(method: "POST", url: URL(string: "\(server.url)/ok")!, body: Data("abc".utf8)), limit: 100)
      #expect(ok.status == 200 && String(decoding: ok.body, as: UTF8.self) == "answer to POST with 3 bytes")
      let moved = try await transport.exchange(HTTPExchangeRequest(method: "GET", url: URL(string: "\(server.url)/moved")!), limit: 100)
      #expect(moved.status == 302 && server.requestOrder == ["/ok", "/moved"])
      await #expect { try await transport.exchange(HTTPExchangeRequest(method: "GET", url: URL(string: "\(server.url)/big")!), limit: 1_000) } throws: {
        ($0 as? ResourceError)?.message.contains("more than 1000 bytes") == true
      }
    }
  }

  /// An API call that gets no answer says so in its own words: nothing was
  /// downloaded or installed, so nothing was changed.
  @Test func anUnansweredCallSaysNothingWasChanged() async throws {
    // port 9 (discard): nothing listens on it here
    await #expect { try await HTTPTransport().exchange(HTTPExchangeRequest(method: "POST", url: URL(string: "http://127.0.0.1:9/")!), limit: 100) } throws: {
      let message = ($0 as? ResourceError)?.message ?? ""
      return message.contains("connection refused") && message.contains("nothing was changed") && !message.contains("installed")
    }
  }

  /// A host that drips its answer never stalls; the whole answer's limit ends it.
  @Test func aDrippingAnswerEndsAtTheDocumentLimit() async throws {
    try await TestHTTPServer.answering({ _ in .text(String(repeating: "x", count: 200)) }) { server in
      server.setFault(.slow(chunk: 1, pause: .milliseconds(50)), forPathEndingWith: "/drip")
      let transport = HTTPTransport(timeouts: .init(stall: .seconds(5), document: .milliseconds(300)))
      await #expect { try await transport.exchange(HTTPExchangeRequest(method: "GET", url: URL(string: "\(server.url)/drip")!), limit: 1_000) } throws: {
        ($0 as? ResourceError)?.code == .network && ($0 as? ResourceError)?.message.contains("in all") == true
      }
    }
  }

  /// https to a server that speaks plain HTTP (it answers the ClientHello
  /// with a 400 and closes): a TLS failure, every time.
  @Test func aPlainServerOnAnHTTPSURLIsATLSFailure() async throws {
    try await TestHTTPServer.answering({ _ in .text("plain") }) { server in
      let transport = HTTPTransport()
      for _ in 0..<10 {
        await #expect { try await transport.exchange(HTTPExchangeRequest(method: "GET", url: URL(string: "https://127.0.0.1:\(server.port)/")!), limit: 100) } throws: {
          ($0 as? ResourceError)?.message.contains("TLS handshake") == true
        }
      }
    }
  }
}

extension HTTPExchangeTests {
  /// The close the suite once met under load — nginx closing an https
  /// attempt before odr's handler was in the pipeline ("I/O on closed
  /// channel") — and a close during the handshake are TLS failures, as
  /// NIOSSL's own handshake errors are.
  @Test func aCloseBeforeTheHandshakeEndsIsToldAsTLS() {
    #expect(TransportFailure(HTTP1Client.Failure.closedDuringHandshake) == .tls)
    #expect(TransportFailure(HTTP1Client.Failure.closedEarly) == .closed)
  }
}
