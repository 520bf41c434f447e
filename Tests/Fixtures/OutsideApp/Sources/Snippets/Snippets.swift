// Every Swift sample of the README, the DocC articles and the doc comments
// of the modules an app links, verbatim (without their imports), each in a function
// that gives it what the text around it has already defined. Compiled by
// scripts/checks/app; ReadmeExamplesTests fails when a sample is missing here.
import Foundation
import FoundationNetworking
import ODRKit

struct Forecast: Decodable, Sendable {
  let summary: String
}

// MARK: README, "Use the library"

func readmeDiscover() async throws {
  // Where the catalog is and what to trust: ODR_CATALOG/ODR_TRUST and the odr.json
  // of the folder the app names, exactly as `odr fetch` reads them there (an odr.json
  // counts once the user adopted it with `odr trust adopt`; the library never adopts).
  let provider = try APIKeyProvider(service: "com.example.demo", configuration: .discover(folder: URL(filePath: "/srv/demo")))
  let key = try await provider.key("Weather")  // fetches the APIKeys tag on the first miss
  _ = key
}

func readmePinned() async throws {
  let pinned = try APIKeyProvider(
    store: SecretServiceStore(service: "com.example.demo"),
    catalog: URL(string: "https://cdn.example.com/odr/")!,
    trust: TrustPolicy(pinned: [VerifyingKey("ed25519:6Q4Vv1Pa0NmHjl2mWm6cGJg7wN9J2bQ9yQfV3m0dXxk=")]))
  let forecastKey = try await pinned.key("Weather")
  _ = forecastKey
}

// MARK: README, "On servers and in containers"

func readmeKernelStore() async throws {
  // The app: the same keys, read from the kernel (microseconds, no bus).
  let provider = APIKeyProvider(store: try KernelKeyringStore(service: "com.example.demo"))
  let weatherKey = try await provider.key("Weather")
  _ = weatherKey
}

func readmeMemoryStore() async throws {
  let memory = try APIKeyProvider(
    store: MemoryStore(service: "com.example.demo"),
    catalog: URL(string: "https://cdn.example.com/odr/")!,
    trust: TrustPolicy(pinned: [VerifyingKey("ed25519:6Q4Vv1Pa0NmHjl2mWm6cGJg7wN9J2bQ9yQfV3m0dXxk=")]))
  let apiKey = try await memory.key("Weather")  // the first miss fetches the pack into memory
  // Every few minutes: start a new lifetime, so the next miss fetches again.
  await memory.invalidate()
  _ = apiKey
}

// MARK: README, "Calling APIs"

func readmeAPIClient(provider: APIKeyProvider) async throws {
  let client = try APIClient(baseURL: "https://api.weather.example", provider: provider)
  let forecast = try await client.send(APIRequest<Forecast>(path: "/v1/forecast", query: ["city": "Oslo"], key: "Weather")).value
  _ = forecast
}

// MARK: ODRKeys, Usage.md

func keysUsageStore() throws {
  let store = try SecretServiceStore(service: "com.example.weather")
  let provider = try APIKeyProvider(store: store, catalog: URL(string: "https://cdn.example/odr/")!, tag: "APIKeys")
  _ = provider
}

func keysUsageKey(provider: APIKeyProvider) async throws {
  let key = try await provider.key("Weather")   // the value
  var request = URLRequest(url: URL(string: "https://api.weather.example/v1/forecast")!)
  request.setValue(key, forHTTPHeaderField: "X-Api-Key")
}

// MARK: ODRNetworking, Usage.md

func networkingUsage() async throws {
  let provider = try APIKeyProvider(service: "com.example.weather", configuration: .discover(folder: URL(filePath: "/srv/demo")))
  let client = try APIClient(policy: .consistent, provider: provider)
  let forecast = try await client.send(APIRequest<Data>.data(method: "GET", path: "https://api.weather.example/v1/forecast?city=Oslo", key: "Weather"))
  _ = forecast
}

// MARK: ODRResources, Usage.md

func resourcesUsage() async throws {
  let catalog = try await ResourceCatalog.load(
    from: URL(filePath: "/srv/odr"),
    trust: TrustPolicy(pinned: [try VerifyingKey("ed25519:…")]))
  let request = try ResourceRequest(tags: ["Level2"], catalog: catalog)
  try await request.beginAccessing()
  let map = try request.url(forResource: "levels/2/map.json")
  // … use the file …
  request.endAccessing()
  _ = map
}

// MARK: Doc comments

func keyProviderDocComment() async throws {
  let provider = APIKeyProvider(store: try SecretServiceStore(service: "com.example.demo"))
  let key = try await provider.key("Weather")
  _ = key
}

func providerConfigurationDocComment() async throws {
  let provider = try APIKeyProvider(service: "com.example.demo", configuration: .discover(folder: URL(filePath: "/srv/demo")))
  let key = try await provider.key("Weather")
  _ = key
}

func providerCatalogDocComment() throws {
  let provider = try APIKeyProvider(
    store: SecretServiceStore(service: "com.example.demo"),
    catalog: URL(string: "https://cdn.example.com/odr/")!,
    trust: TrustPolicy(pinned: [VerifyingKey("ed25519:…")]))
  _ = provider
}

func apiClientDocComment(provider: APIKeyProvider) async throws {
  let client = try APIClient(baseURL: "https://api.weather.example", provider: provider)
  let forecast = try await client.send(APIRequest<Forecast>(path: "/v1/forecast", key: "Weather")).value
  _ = forecast
}

func apiRequestDocComment() {
  struct Forecast: Decodable, Sendable { let summary: String }
  let request = APIRequest<Forecast>(path: "/v1/forecast", query: ["city": "Oslo"], key: "Weather")
  _ = request
}

func configurationDocComment() async throws {
  let configuration = try ODRConfiguration.discover(folder: URL(filePath: "/srv/demo"))
  let catalog = try await configuration.loadCatalog(transport: try await configuration.transport { location in
    URLSessionTransport(location)
  })
  _ = catalog
}

func secretStoreDocComment() async throws {
  let store: any SecretStore = try SecretServiceStore(service: "com.example.demo")
  try await store.setValue("k-123", for: "Weather")
  let key = try await store.value(for: "Weather")
  _ = key
}

func resourceRequestDocComment() async throws {
  let catalog = try await ResourceCatalog.load(from: URL(filePath: "/srv/odr"))
  let request = try ResourceRequest(tags: ["Onboarding"], catalog: catalog)
  try await request.beginAccessing()          // download, verify, pin
  let image = try request.url(forResource: "Onboarding/welcome.png")
  request.endAccessing()                      // unpin (also on deinit)
  _ = image
}

// MARK: ODRKit, SecretServiceCatalogTokens

func kitCatalogTokens() throws {
  var configuration = try ODRConfiguration.discover(folder: URL(filePath: "/srv/demo"))
  configuration.catalogTokens = SecretServiceCatalogTokens(deadline: .seconds(2))
  _ = configuration
}

// MARK: ODRBase, ODRError

func baseErrors(provider: APIKeyProvider) async throws {
  var key: String?
  func log(_ text: String) { print(text) }
  do {
    key = try await provider.key("Weather")
  } catch let error as any ODRError where error.isTransient {
    // a timeout, a dropped connection, a locked keyring: try again later
  } catch let error as any ODRError {
    log("\(error.domain) \(error.kind): \(error.message)")
  }
  _ = key
}
