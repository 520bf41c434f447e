import FoundationEssentials
import ODRAge
import ODRBase
import ODRExec
import ODRCatalog
import ODRConfiguration
import ODRKeyFormat
import ODRProxy
import ODRPublishing
import ODRTransports
import ODRSigning

/// What each fuzz target feeds its input to (FuzzTesting/, `scripts/checks/fuzz`),
/// and what the ordinary suite replays every kept crasher through
/// (`FuzzTesting/FailCases/<target>/`): every parser of bytes a host, a
/// cache, a repository or another program controls. Each entry may throw —
/// a refusal is the expected answer — but must never crash, hang or
/// allocate without bound; where two readers read the same document, they
/// must agree.
package enum FuzzEntry: String, CaseIterable, Sendable {
  /// The one JSON reader: a whole document, and its keys.
  case jsonReader
  /// catalog.json: the header the trust decision reads, then the catalog.
  case catalog
  /// catalog.json.sig: signature lines, verified over a fixed catalog.
  case signatureLines
  /// A catalog's hand-over statements, read and verified for its bundle.
  case handover
  /// odr.json, tags.json and APIKeys documents (the first byte chooses).
  case documents
  /// age files (armor, header, stanzas, payload), opened with a fixed identity.
  case ageFile
  /// SSH keys: a public key line read as a recipient, or an OpenSSH
  /// private key file read as an identity (the first byte chooses).
  case sshKeys
  /// Recipients files (age1…, age1pq1…, ssh-… with authorized_keys
  /// options, comments) and identity files (the first byte chooses).
  case recipientsFile
  /// dotenv files (`odr exec --env-file`, `odr env --env-file`).
  case dotenv
  /// `odr inject` templates.
  case template
  /// A request head a proxied child sends (`odr exec --proxy`): the
  /// request line, then `Name: value` lines, decided for fixed bindings.
  case proxyRequest
  /// An S3 ListObjectsV2 page (`odr publish --prune`): keys and the
  /// continuation token.
  case s3Listing
  /// What an AWS endpoint answers odr's own calls (the first byte
  /// chooses): STS's credentials or error (XML), KMS's error (JSON or
  /// XML), GitHub's OIDC token (JSON), and a KMS key ARN.
  case awsAnswer

  /// Runs this entry on `bytes`. A refusal is the answer to most inputs
  /// (dropped as such); only a crash is a finding.
  package func run(_ bytes: [UInt8]) {
    let data = Data(bytes)
    switch self {
    case .jsonReader:
      let checked = Result { try JSONReader.check(bytes, limit: 1 << 20) }
      let keys = Result { try JSONReader.keys(of: bytes, limit: 1 << 20) }
      // The outline reads exactly the documents the check reads.
      let (checkedOK, keysOK) = (dropping(.isTheAnswer, checked.get) != nil, dropping(.isTheAnswer, keys.get) != nil)
      precondition(checkedOK == keysOK, "check and keys(of:) disagree")
    case .catalog:
      let header = dropping(.isTheAnswer) { try CatalogHeader.read(data) }
      if let catalog = dropping(.isTheAnswer, { try Catalog.decode(data) }) {
        // What the decision reads is what the decoder reads.
        precondition(header?.bundle == catalog.bundle && header?.version == catalog.version
                       && header?.signers == catalog.signers && header?.handovers == catalog.handovers, "header and catalog disagree")
      }
    case .signatureLines:
      guard let signature = dropping(.isTheAnswer, { try CatalogSignature(parsing: data) }) else { return }
      let lines = signature.verifiedLines(of: Self.signedCatalog)
      for format in 1...CatalogSignature.postQuantumFormat {
        // The one rule and the per-line forms agree.
        precondition(Set(signature.signers(of: Self.signedCatalog, format: format)) == Set(lines.filter { $0.format == format }.map(\.key)),
                     "signers(of:format:) and verifiedLines(of:) disagree")
      }
    case .handover:
      guard let header = dropping(.isTheAnswer, { try CatalogHeader.read(data) }) else { return }
      dropping(.isTheAnswer) { try Handover.verify(header.handovers ?? [], bundle: header.bundle, upTo: header.version) }
      _ = Handover.reach(header.handovers ?? [], from: Set(header.signers ?? []))
    case .documents:
      guard let first = bytes.first else { return }
      let rest = Array(bytes.dropFirst())
      switch first % 3 {
      case 0: _ = dropping(.isTheAnswer) { try ProjectFile.parse(rest, file: "odr.json") }
      case 1: _ = dropping(.isTheAnswer) { try PublisherManifest.decode(Data(rest)) }
      default: _ = dropping(.isTheAnswer) { try APIKeysDocument.parse(Data(rest)) }
      }
    case .ageFile:
      _ = dropping(.isTheAnswer) { try Age.decrypt(data, identities: [Self.identity]) }
    case .sshKeys, .recipientsFile:
      guard let first = bytes.first else { return }
      let text = String(decoding: bytes.dropFirst(), as: UTF8.self)
      let read: () throws -> Void = switch (self, first % 2) {
      case (.sshKeys, 0): { _ = try AgeRecipient(text) }
      case (.recipientsFile, 0): { _ = try AgeRecipient.parseFile(text) }
      default: { _ = try AgeIdentity.parseFile(text) }
      }
      dropping(.isTheAnswer, read)
    case .dotenv:
      _ = dropping(.isTheAnswer) { try DotenvFile(path: "fuzz.env", text: String(decoding: bytes, as: UTF8.self)) }
    case .template:
      _ = dropping(.isTheAnswer) { try SecretTemplate(path: "fuzz.tmpl", text: String(decoding: bytes, as: UTF8.self)) }
    case .proxyRequest:
      Self.decideProxyRequest(bytes)
    case .s3Listing:
      guard let page = dropping(.isTheAnswer, { try S3ListingPage(bytes) }) else { return }
      precondition(page.keys.count <= S3ListingPage.maxKeys && (page.next.map { !$0.isEmpty } ?? true), "a page beyond its bounds")
    case .awsAnswer:
      Self.readAWSAnswer(bytes)
    }
  }

  /// Reads `bytes` as the answer to one of odr's AWS calls. A message
  /// quotes at most 300 characters of what the endpoint said, printable
  /// ASCII only.
  static func readAWSAnswer(_ bytes: [UInt8]) {
    guard let first = bytes.first else { return }
    let body = Data(bytes.dropFirst())
    let status = [200, 400, 403, 500][Int(first >> 6)]
    switch first % 4 {
    case 0:
      _ = dropping(.isTheAnswer) { try STSWebIdentity.credentials(from: HTTPExchangeResponse(status: status, body: body), role: "r", tokenSource: "t") }
    case 1:
      let error = AWSKMS.failure(HTTPExchangeResponse(status: status, body: body), action: "Decrypt", arn: fuzzARN, context: ["odr:tag": "t"], credentials: "c")
      precondition(error.message.utf8.count < 2_000 && error.message.unicodeScalars.allSatisfy { $0.value < 0x7F || "—…".unicodeScalars.contains($0) },
                   "a KMS error quotes more than it should")
    case 2:
      _ = AWSCredentialChain.gitHubTokenValue(body)
    default:
      if let arn = KMSKeyARN(String(decoding: body, as: UTF8.self)) { precondition(!arn.region.isEmpty && arn.description.utf8.count <= 512) }
    }
  }

  private static let fuzzARN = KMSKeyARN("arn:aws:kms:us-east-1:123456789012:key/fuzz")!

  /// Reads `bytes` as a request head and decides it; a forwarded request
  /// must carry no placeholder of a key it did not substitute and no line
  /// break in a header.
  static func decideProxyRequest(_ bytes: [UInt8]) {
    let lines = String(decoding: bytes.prefix(16 << 10), as: UTF8.self).split(separator: "\n", omittingEmptySubsequences: false).prefix(100)
    let requestLine = (lines.first ?? "").split(separator: " ", maxSplits: 1).map(String.init)
    let headers = lines.dropFirst().compactMap { line -> ProxyRequest.Header? in
      guard let colon = line.firstIndex(of: ":") else { return nil }
      return ProxyRequest.Header(String(line[..<colon]), String(line[line.index(after: colon)...].drop { $0 == " " }))
    }
    let request = ProxyRequest(method: requestLine.first ?? "", scheme: "https", host: "api.example", port: 443,
                               target: requestLine.count > 1 ? requestLine[1] : "/", headers: headers)
    // The body: what follows the first empty line, searched for placeholders.
    if let blank = lines.firstIndex(of: "") {
      let body = Array(lines[blank...].joined(separator: "\n").utf8)
      let notes = ProxyDecision.bodyNotes(body, bindings: proxyBindings)
      precondition(notes.count <= proxyBindings.count && (notes.isEmpty || body.count >= 36), "a note for a placeholder the body does not hold")
    }
    // The base-URL route of the same target: only under the token, onto the base's path.
    if let (base, target) = ProxyBase.route(request.target, token: "T0ken", bases: proxyBases) {
      precondition(request.target.hasPrefix("/T0ken/\(base.name)") && target.hasPrefix(base.path + "/"), "a route outside its base")
    }
    guard case .forward(let forward) = ProxyDecision.decide(request, bindings: proxyBindings) else { return }
    for binding in proxyBindings where !forward.keys.contains(binding.key.name) {
      precondition(!forward.target.contains(binding.key.value) && !forward.headers.contains { $0.value.contains(binding.key.value) },
                   "a value went out that was not substituted")
    }
    precondition(!forward.headers.contains { $0.value.utf8.contains { $0 == 0x0d || $0 == 0x0a || $0 == 0 } } || bytes.contains(0x0d) || bytes.contains(0),
                 "a key put a line break in a header")
  }

  /// Two keys with placeholders the fuzzer can find: `odr_` and 32 `A`s or `B`s.
  static let proxyBindings = [
    ProxyBinding(key: APIKey(name: "Header", value: "h-value", metadata: KeyMetadata(header: "X-Key", hosts: ["api.example"])),
                 placeholder: Placeholder(text: "odr_" + String(repeating: "A", count: 32))!),
    ProxyBinding(key: APIKey(name: "Query", value: "q value&", metadata: KeyMetadata(query: "key", hosts: ["other.example"])),
                 placeholder: Placeholder(text: "odr_" + String(repeating: "B", count: 32))!),
  ]

  /// Base URLs the fuzzer's targets are routed against.
  static let proxyBases = [try! ProxyBase.parse("API=https://api.example/v1").get(), try! ProxyBase.parse("AP=http://127.0.0.1:8080").get()]  // valid by construction

  /// A catalog the signature lines are checked against.
  static let signedCatalog = Data(#"{"formatVersion":2,"bundle":"com.example.fuzz","version":1,"tags":{}}"#.utf8)
  /// The identity of the age test vectors (public: it guards nothing).
  static let identity = try! AgeIdentity("AGE-SECRET-KEY-1EGTZVFFV20835NWYV6270LXYVK2VKNX2MMDKWYKLMGR48UAWX40Q2P2LM0")
}

