import Foundation
import FoundationNetworking
import ODRBase
import ODRCatalog
public import ODRTransports

extension URLSessionTransport: HTTPExchanging {
  /// A transport for API calls only (``exchange(_:limit:)``), failing after
  /// `stall` without a byte.
  public init(stall: Duration = .seconds(15)) {
    self.init(NetworkLocation(url: URL(filePath: "/"), stall: stall))  // no S3 access: no role
  }

  /// One API call through URLSession (no redirects followed: an API
  /// answer is the one asked for), failing after the location's stall time
  /// without a byte, or four times that in all.
  public func exchange(_ request: HTTPExchangeRequest, limit: Int) async throws -> HTTPExchangeResponse {
    try await HTTPDocument.within(location.stall * 4, url: request.url) { try await self.send(request, limit: limit) }
  }

  private func send(_ request: HTTPExchangeRequest, limit: Int) async throws -> HTTPExchangeResponse {
    var outgoing = URLRequest(url: request.url)
    outgoing.httpMethod = request.method
    if !request.body.isEmpty { outgoing.httpBody = request.body }
    for (name, value) in request.headers where name.lowercased() != "host" { outgoing.setValue(value, forHTTPHeaderField: name) }
    let exchange = ExchangeSession.single(outgoing, stall: location.stall)
    defer { exchange.cancel() }
    do {
      let response = try await exchange.response()
      var body = Data()
      while let chunk = try await exchange.next() {
        body.append(chunk)
        guard body.count <= limit else {
          throw ResourceError(.network, "\(request.url.redacted) answered with more than \(limit) bytes; odr refuses it. Check the endpoint.")
        }
      }
      return HTTPExchangeResponse(status: response.statusCode, body: body)
    } catch {
      throw failure(error, url: request.url, address: request.url)
    }
  }
}
