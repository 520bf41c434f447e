public import FoundationEssentials

/// What an HTTP server said identifies the version of a document it served
/// (`ETag`, `Last-Modified`): sent back as `If-None-Match` /
/// `If-Modified-Since` to revalidate a kept catalog, and as `If-Range` to
/// resume a blob download only if it is still the same bytes.
public struct CacheValidators: Codable, Sendable, Equatable {
  /// The `ETag` header, as the server sent it (quotes included).
  public var etag: String?
  /// The `Last-Modified` header, as the server sent it.
  public var lastModified: String?

  public init(etag: String? = nil, lastModified: String? = nil) {
    self.etag = etag
    self.lastModified = lastModified
  }

  /// True when there is nothing to send back.
  public var isEmpty: Bool { etag == nil && lastModified == nil }

  /// The validator `If-Range` takes: a strong ETag, else the date (RFC 9110
  /// §13.1.5; a weak ETag can never match a range request).
  public var ifRange: String? {
    if let etag, !etag.hasPrefix("W/") { return etag }
    return lastModified
  }
}

/// A document fetched with validators: either new bytes, or "still the one
/// you have" (HTTP 304).
public enum FetchedDocument: Sendable {
  /// The document's bytes and the validators that came with them.
  case fetched(Data, CacheValidators)
  /// The server confirmed the kept copy is current.
  case notModified
}

/// Where a resumed download restarts: the bytes kept so far and the
/// validators of the response they came from.
public struct ResumePoint: Sendable, Equatable {
  /// Bytes already on disk.
  public var offset: Int64
  /// The validators of the response those bytes came from.
  public var validators: CacheValidators

  public init(offset: Int64, validators: CacheValidators) {
    self.offset = offset
    self.validators = validators
  }

  /// The `Range` and `If-Range` headers that resume from `resume`; none
  /// when there is nothing to resume or no validator to make it safe.
  package static func headers(for resume: ResumePoint?) -> [(String, String)] {
    guard let resume, resume.offset > 0, let validator = resume.validators.ifRange else { return [] }
    return [("Range", "bytes=\(resume.offset)-"), ("If-Range", validator)]
  }

  /// True when a 206's `Content-Range` is the range asked for; anything
  /// else starts over.
  package func matches(contentRange: String?) -> Bool {
    contentRange?.hasPrefix("bytes \(offset)-") == true
  }
}
