import FoundationEssentials

/// Sizes as people write and read them.
///
/// Read: a number (a fraction is allowed) and a unit. `K`, `M`, `G`, `T`,
/// `P` and `KiB` … `PiB` are powers of 1024; `KB` … `PB` are powers of 1000
/// (as disk makers count); `B` or nothing means bytes. Case is ignored:
/// `500M`, `1.5G`, `1GB`, `10MiB`, `4096`.
/// Shown: bytes below 1 KiB, else one decimal in the largest binary unit
/// that keeps the number at least 1 (`50.0 MiB`, `1.5 GiB`).
public enum ByteSize {
  /// The largest size accepted (2^60 bytes: 1 EiB).
  public static let maximum: Int64 = 1 << 60

  /// The bytes `text` names, or nil when it is not a size this reads (or is
  /// larger than ``maximum``).
  public static func parse(_ text: String) -> Int64? {
    let trimmed = text.filter { $0 != " " }
    let digits = trimmed.prefix { $0.isASCII && ($0.isNumber || $0 == ".") }
    let unit = trimmed.dropFirst(digits.count).uppercased()
    guard !digits.isEmpty, digits.filter({ $0 == "." }).count <= 1, digits.first != ".", digits.last != ".",
          let multiplier = multipliers[unit] else { return nil }
    if !digits.contains("."), let whole = Int64(digits) {
      let (bytes, overflow) = whole.multipliedReportingOverflow(by: multiplier)
      return overflow || bytes > maximum ? nil : bytes
    }
    guard let number = Double(digits) else { return nil }
    let bytes = (number * Double(multiplier)).rounded()
    return bytes <= Double(maximum) ? Int64(bytes) : nil
  }

  /// True when `text` is written like a size but names more than ``maximum``.
  public static func exceedsMaximum(_ text: String) -> Bool {
    guard parse(text) == nil else { return false }
    let trimmed = text.filter { $0 != " " }
    let digits = trimmed.prefix { $0.isASCII && ($0.isNumber || $0 == ".") }
    guard let number = Double(digits), let multiplier = multipliers[trimmed.dropFirst(digits.count).uppercased()] else { return false }
    return number * Double(multiplier) > Double(maximum)
  }

  /// `bytes` for a person: `512 bytes`, `1.0 KiB`, `50.0 MiB`.
  public static func format(_ bytes: Int64) -> String {
    guard bytes >= 1024 else { return bytes == 1 ? "1 byte" : "\(bytes) bytes" }
    var value = Double(bytes)
    var unit = 0
    let units = ["KiB", "MiB", "GiB", "TiB", "PiB", "EiB"]
    repeat {
      value /= 1024
      unit += 1
    } while value >= 1024 && unit < units.count
    let tenths = Int64((value * 10).rounded())
    return "\(tenths / 10).\(tenths % 10) \(units[unit - 1])"
  }

  private static let multipliers: [String: Int64] = {
    var table: [String: Int64] = ["": 1, "B": 1]
    for (index, letter) in ["K", "M", "G", "T", "P"].enumerated() {
      let binary = Int64(1) << (10 * (index + 1))
      var decimal: Int64 = 1
      for _ in 0...index { decimal *= 1000 }
      table[letter] = binary
      table[letter + "IB"] = binary
      table[letter + "B"] = decimal
    }
    return table
  }()
}
