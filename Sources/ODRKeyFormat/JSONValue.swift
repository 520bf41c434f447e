import FoundationEssentials
import ODRBase

/// A JSON tree, for documents whose shape is checked by hand.
enum JSONValue: Decodable, Sendable {
  case null, bool(Bool), number(Double), string(String), array([JSONValue]), object([String: JSONValue])

  init(from decoder: any Decoder) throws {
    let container = try decoder.singleValueContainer()
    if container.decodeNil() { self = .null }
    // each JSON type in turn; an object is decoded last and reports the error
    else if let value = dropping(.isTheAnswer, { try container.decode(Bool.self) }) { self = .bool(value) }
    else if let value = dropping(.isTheAnswer, { try container.decode(Double.self) }) { self = .number(value) }  // not a number: the next type is tried
    else if let value = dropping(.isTheAnswer, { try container.decode(String.self) }) { self = .string(value) }  // not a string: the next type is tried
    else if let value = dropping(.isTheAnswer, { try container.decode([JSONValue].self) }) { self = .array(value) }  // not an array: the object below reports the error
    else { self = .object(try container.decode([String: JSONValue].self)) }
  }

  /// "a number", "an array", … for messages.
  var kind: String {
    switch self {
    case .null: "null"
    case .bool: "a boolean"
    case .number: "a number"
    case .string: "a string"
    case .array: "an array"
    case .object: "an object"
    }
  }
}
