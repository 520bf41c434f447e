import FoundationEssentials
public import ODRBase

/// AWS KMS's `Encrypt` and `Decrypt` (JSON 1.1 API, SigV4-signed with
/// ``SigV4Signer``), as the ``KeyWrapService`` of `awskms:` recipients: a
/// pack's file key is wrapped under the key named by its ARN, bound to an
/// encryption context (`odr:bundle`, `odr:tag`), and only opens with the
/// same context. KMS is asked in the key's own region (from the ARN), at
/// `AWS_ENDPOINT_URL_KMS`, `AWS_ENDPOINT_URL` or AWS's endpoint.
public struct AWSKMS: KeyWrapService {
  public let credentials: AWSCredentialChain
  private let http: any HTTPExchanging
  private let environment: [String: String]
  /// The most of a KMS answer odr reads (a ciphertext is at most 6 KiB).
  package static let answerLimit = 64 << 10

  public init(credentials: AWSCredentialChain, http: any HTTPExchanging, environment: [String: String]) {
    (self.credentials, self.http, self.environment) = (credentials, http, environment)
  }

  /// KMS with the credentials `environment` names; nil when it names none.
  public static func fromEnvironment(_ environment: [String: String], http: any HTTPExchanging) -> AWSKMS? {
    AWSCredentialChain.find(in: environment, http: http).map { AWSKMS(credentials: $0, http: http, environment: environment) }
  }

  public func wrap(_ secret: [UInt8], key: String, context: [String: String]) async throws -> [UInt8] {
    let plaintext = Data(secret).base64EncodedString()
    let answer = try await call("Encrypt", Request(keyID: key, plaintext: plaintext, encryptionContext: context), hiding: [plaintext])
    guard let blob = answer.ciphertextBlob.flatMap({ Data(base64Encoded: $0) }), !blob.isEmpty else {
      throw AWSError(.service, "KMS answered Encrypt for \(key) without a ciphertext; nothing was written.")
    }
    return Array(blob)
  }

  public func unwrap(_ blob: [UInt8], key: String, context: [String: String]) async throws -> [UInt8] {
    let answer = try await call("Decrypt", Request(keyID: key, ciphertextBlob: Data(blob).base64EncodedString(), encryptionContext: context))
    guard let plaintext = answer.plaintext.flatMap({ Data(base64Encoded: $0) }) else {
      throw AWSError(.service, "KMS answered Decrypt for \(key) without a plaintext; nothing was imported.")
    }
    return Array(plaintext)
  }

  /// What odr reads of an answer: Encrypt's ciphertext, Decrypt's plaintext.
  package struct Answer: Decodable {
    let ciphertextBlob: String?
    let plaintext: String?
    enum CodingKeys: String, CodingKey { case ciphertextBlob = "CiphertextBlob", plaintext = "Plaintext" }
  }

  /// What Encrypt and Decrypt are asked.
  private struct Request: Encodable {
    let keyID: String
    var plaintext: String?
    var ciphertextBlob: String?
    let encryptionContext: [String: String]
    enum CodingKeys: String, CodingKey {
      case keyID = "KeyId", plaintext = "Plaintext", ciphertextBlob = "CiphertextBlob", encryptionContext = "EncryptionContext"
    }
  }

  /// One call; an error answer that quotes the credentials or `hiding` is not quoted.
  private func call(_ action: String, _ request: Request, hiding: [String] = []) async throws -> Answer {
    guard let arn = KMSKeyARN(request.keyID) else { throw AWSError(.keyNotFound, "'\(request.keyID.prefix(200))' is not the ARN of a KMS key or alias.") }
    let context = request.encryptionContext
    let credentials = try await credentials.credentials()
    let endpoint = try AWSEndpoint.url("kms", region: arn.region, in: environment)
    let data = try JSONEncoder().encode(request)
    let headers = SigV4Signer(credentials: credentials, region: arn.region, service: "kms").sign(
      method: "POST", url: endpoint,
      headers: [("Content-Type", "application/x-amz-json-1.1"), ("X-Amz-Target", "TrentService.\(action)")],
      payloadHash: SigV4Signer.payloadHash(data), date: Date())
    let response = try await http.exchange(HTTPExchangeRequest(method: "POST", url: endpoint, headers: headers, body: data), limit: Self.answerLimit)
    guard (200..<300).contains(response.status) else {
      let secrets = [credentials.secretAccessKey, credentials.sessionToken ?? ""] + hiding
      throw Self.failure(response, action: action, arn: arn, context: context, credentials: self.credentials.sourceName, hiding: secrets)
    }
    do { return try JSONDecoder().decode(Answer.self, from: response.body) } catch {
      throw AWSError(.service, "KMS's answer to \(action) for \(arn) is not the JSON odr expects; nothing was changed. Check AWS_ENDPOINT_URL_KMS (is it KMS?).")
    }
  }

  /// The error a KMS error answer means, saying what to check.
  package static func failure(_ response: HTTPExchangeResponse, action: String, arn: KMSKeyARN, context: [String: String],
                              credentials: String, hiding secrets: [String] = []) -> AWSError {
    struct Problem: Decodable {
      let type: String?
      let message: String?
      enum CodingKeys: String, CodingKey { case type = "__type", message, Message }
      init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        type = try container.decodeIfPresent(String.self, forKey: .type)
        message = try container.decodeIfPresent(String.self, forKey: .message) ?? container.decodeIfPresent(String.self, forKey: .Message)
      }
    }
    // not KMS's JSON: an XML error (what AWS's front end and moto's
    // authorizer answer), else the status alone says what failed
    let problem = dropping(.isTheAnswer) { try JSONDecoder().decode(Problem.self, from: response.body.prefix(answerLimit)) }
    let xml = String(decoding: response.body.prefix(answerLimit), as: UTF8.self)
    let code = (problem?.type ?? XMLText.element("Code", in: xml)).map { AWSMessage.identifier($0, hiding: secrets) } ?? "HTTP \(response.status)"
    let said = (problem?.message ?? XMLText.element("Message", in: xml)).map { ": \(AWSMessage.clean($0, hiding: secrets))" } ?? ""
    let binding = context.sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value)" }.joined(separator: ", ")
    let permission = action == "Encrypt" ? "kms:Encrypt" : "kms:Decrypt"
    switch code {
    case "AccessDeniedException", "AccessDenied":
      return AWSError(.keyDenied, "KMS denied \(action) on \(arn) to \(credentials)\(said). The key policy, or the role's own policy, must allow \(permission) to it\(action == "Decrypt" ? " with the encryption context \(binding)" : "") (docs/ci.md, \"No stored secret\").")
    case "DisabledException", "KMSInvalidStateException":
      return AWSError(.keyDisabled, "The KMS key \(arn) cannot be used: \(code)\(said). It is disabled or pending deletion; its owner must enable it (aws kms enable-key), or the publisher must re-pack to another key.")
    case "NotFoundException":
      return AWSError(.keyNotFound, "KMS in \(arn.region) has no key \(arn)\(said). Check the ARN (its region and account) and AWS_ENDPOINT_URL_KMS.")
    case "InvalidCiphertextException", "IncorrectKeyException":
      return AWSError(.wrongContext, "KMS refused the pack's ciphertext for \(arn) (\(code)): it was not made for this encryption context (\(binding)) — a pack copied from another bundle or tag — or under this key, or it is damaged. Nothing was imported; ask the publisher to re-pack.")
    case "UnrecognizedClientException", "InvalidSignatureException", "ExpiredTokenException", "IncompleteSignature", "InvalidClientTokenId", "MissingAuthenticationToken":
      return AWSError(.credentialsRefused, "AWS refused the credentials of \(credentials) for KMS: \(code)\(said). Check that they are current and meant for this account (and AWS_ENDPOINT_URL_KMS).")
    default:
      return AWSError(.service, "KMS answered \(code)\(said) to \(action) for \(arn); nothing was changed. Try again.")
    }
  }
}
