// An app that embeds odr: it asks APIKeyProvider for its API key (fetching
// the APIKeys tag into the keyring on first use, from a folder, an http(s)
// server or an s3:// bucket) and calls an endpoint with APIClient, which
// attaches the key as the catalog's metadata says. The key never appears in
// the binary, the repository or the output.
//
//   swift run WeatherClient --catalog https://cdn.example.com/odr/ --trust ed25519:… \
//     --url http://127.0.0.1:8080 [--memory]
//
// Without --catalog, odr.json and the ODR_* variables say where the catalog
// is and what to trust, exactly as for `odr fetch`.
import Foundation
import ODRKit

struct Forecast: Decodable {
  let forecast: String
}

func option(_ name: String) -> String? {
  let arguments = CommandLine.arguments
  return arguments.firstIndex(of: name).flatMap { arguments.indices.contains($0 + 1) ? arguments[$0 + 1] : nil }
}

guard let endpoint = option("--url") else {
  FileHandle.standardError.write(Data("usage: WeatherClient [--catalog LOCATION] [--trust KEY] --url URL [--memory]\n".utf8))
  exit(2)
}

do {
  let service = "com.example.demo"
  let store: any SecretStore = CommandLine.arguments.contains("--memory") ? MemoryStore(service: service) : try SecretServiceStore(service: service)
  let overrides = ODRConfiguration.Overrides(catalog: option("--catalog").map { [$0] } ?? [], trust: option("--trust").map { [$0] } ?? [])
  // The app names the folder its odr.json is read from (an adopted one only: the library never adopts).
  let folder = URL(filePath: FileManager.default.currentDirectoryPath, directoryHint: .isDirectory)
  let provider = try APIKeyProvider(service: service, configuration: .discover(overrides, folder: folder), store: store)
  let client = try APIClient(baseURL: endpoint, provider: provider)
  let response = try await client.send(APIRequest<Forecast>(path: "/forecast", key: "Weather"))
  print("GET \(endpoint)/forecast → \(response.status): \(response.value.forecast)")
} catch {
  FileHandle.standardError.write(Data("WeatherClient: \(error)\n".utf8))
  exit(1)
}
