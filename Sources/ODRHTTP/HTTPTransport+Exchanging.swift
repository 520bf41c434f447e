import FoundationEssentials
import ODRBase
import ODRCatalog
import NIOCore
import NIOHTTP1
public import ODRTransports

extension HTTPTransport: HTTPExchanging {
  /// One API call on the transport's client: its connect and stall
  /// limits, and the whole answer within the document limit.
  public func exchange(_ request: HTTPExchangeRequest, limit: Int) async throws -> HTTPExchangeResponse {
    let outgoing = try Self.request(request.method, request.url, headers: request.headers, body: request.body.isEmpty ? nil : .data(request.body, sha256: ""))
    return try await HTTPDocument.within(timeouts.document, url: request.url) { try await self.send(outgoing, request, limit: limit) }
  }

  private func send(_ outgoing: HTTP1Request, _ request: HTTPExchangeRequest, limit: Int) async throws -> HTTPExchangeResponse {
    do {
      let response = try await Self.client(for: timeouts).execute(outgoing)
      let body = try await response.body.collect(upTo: limit)
      return HTTPExchangeResponse(status: Int(response.status.code), body: Data(body.readableBytesView))
    } catch let error as HTTP1BodyTooLong {
      throw ResourceError(.network, "\(request.url.redacted) answered with more than \(error.limit) bytes; odr refuses it. Check the endpoint.")
    } catch {
      if Task.isCancelled || error is CancellationError { throw CancellationError() }
      throw Self.failure(error, url: request.url, address: request.url, timeouts: timeouts, purpose: .calling)
    }
  }
}
