// An app that embeds odr: it asks APIKeyProvider for its API key (fetching
// the APIKeys tag into the keyring on first use) and calls an endpoint with
// it. The key never appears in the binary, the repository or the output.
//
//   swift run WeatherClient --catalog /tmp/demo-resources --url http://127.0.0.1:8080/forecast [--memory]
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import ODRKeyring
import ODRKeys

func option(_ name: String) -> String? {
  let arguments = CommandLine.arguments
  return arguments.firstIndex(of: name).flatMap { arguments.indices.contains($0 + 1) ? arguments[$0 + 1] : nil }
}

guard let catalog = option("--catalog"), let endpoint = option("--url").flatMap(URL.init(string:)) else {
  FileHandle.standardError.write(Data("usage: WeatherClient --catalog DIR --url URL [--memory]\n".utf8))
  exit(2)
}

let service = "com.example.demo"
let store: any SecretStore = CommandLine.arguments.contains("--memory")
  ? MemoryStore(service: service)
  : try SecretServiceStore(service: service)
let provider = APIKeyProvider(store: store, catalog: URL(filePath: catalog))

do {
  let key = try await provider.key("Weather")
  var request = URLRequest(url: endpoint)
  request.setValue(key, forHTTPHeaderField: "X-Api-Key")
  let (body, response) = try await URLSession.shared.data(for: request)
  let status = (response as? HTTPURLResponse)?.statusCode ?? 0
  print("GET \(endpoint.absoluteString) → \(status), \(body.count) bytes")
  exit(status == 200 ? 0 : 1)
} catch {
  FileHandle.standardError.write(Data("WeatherClient: \(error)\n".utf8))
  exit(1)
}
