public import FoundationEssentials

/// Checks Foundation's JSONDecoder does not make: it keeps one of two equal
/// keys in an object silently, so a document like `{"A": 1, "A": 2}` must
/// be refused before decoding.
public enum StrictJSON {
  /// The first key that appears twice in one object, with the keys leading
  /// to that object (for the message). nil when keys are unique or the
  /// data is not JSON (the decoder reports that).
  public static func firstDuplicateKey(in data: Data) -> (key: String, path: [String])? {
    let bytes = [UInt8](data)
    // Open containers, innermost last: its kind, its name in the path, and
    // (for objects) the keys seen so far.
    var stack: [(isObject: Bool, name: String, keys: Set<String>)] = []
    var pendingKey: String?
    var index = 0
    while index < bytes.count {
      let byte = bytes[index]
      switch byte {
      case UInt8(ascii: "\""):
        guard let (string, end) = readString(bytes, from: index) else { return nil }
        index = end
        // A string directly inside an object, followed by ':', is a key.
        var next = index + 1
        while next < bytes.count, [0x20, 0x09, 0x0a, 0x0d].contains(bytes[next]) { next += 1 }
        if stack.last?.isObject == true, next < bytes.count, bytes[next] == UInt8(ascii: ":") {
          if !stack[stack.count - 1].keys.insert(string).inserted {
            return (string, stack.dropFirst().map(\.name))
          }
          pendingKey = string
        }
      case UInt8(ascii: "{"), UInt8(ascii: "["):
        stack.append((byte == UInt8(ascii: "{"), pendingKey ?? "[]", []))
        pendingKey = nil
      case UInt8(ascii: "}"), UInt8(ascii: "]"):
        _ = stack.popLast()
      case UInt8(ascii: ","):
        pendingKey = nil
      default:
        break
      }
      index += 1
    }
    return nil
  }

  /// The decoded string starting at the quote at `start`, and the index of
  /// its closing quote.
  private static func readString(_ bytes: [UInt8], from start: Int) -> (String, Int)? {
    var index = start + 1
    var escaped = false
    while index < bytes.count {
      if escaped {
        escaped = false
      } else if bytes[index] == UInt8(ascii: "\\") {
        escaped = true
      } else if bytes[index] == UInt8(ascii: "\"") {
        let raw = Array(bytes[start...index])
        if !raw.contains(UInt8(ascii: "\\")) { return (String(decoding: raw.dropFirst().dropLast(), as: UTF8.self), index) }
        // an escape JSON rejects: not a string, which the caller reports
        guard let text = try? JSONDecoder().decode(String.self, from: Data(raw)) else { return nil }
        return (text, index)
      }
      index += 1
    }
    return nil
  }
}
