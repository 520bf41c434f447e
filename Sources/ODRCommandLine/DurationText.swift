import ArgumentParser

/// Durations as users write them: `90s`, `15m`, `12h`, `30d`, `2w`.
enum DurationText {
  static func seconds(_ text: String, option: String) throws -> Int64 {
    let units: [Character: Int64] = ["s": 1, "m": 60, "h": 3_600, "d": 86_400, "w": 604_800]
    guard let unit = text.last.flatMap({ units[$0] }), let number = Int64(text.dropLast()), number >= 0 else {
      throw ValidationError("\(option) '\(text)' is not a duration: a whole number and a unit, s, m, h, d or w, for example 30d or 12h.")
    }
    guard number > 0 else { throw ValidationError("\(option) must be longer than 0, for example 30d or 12h.") }
    guard number <= 100 * 365 * 86_400 / unit else { throw ValidationError("\(option) '\(text)' is more than 100 years.") }
    return number * unit
  }

  /// An interval as `odr exec --watch` takes it: a whole number and ms, s,
  /// m or h (`500ms`, `30s`, `5m`), from 10 ms to a day.
  static func interval(_ text: String, option: String) throws -> Duration {
    let units: [(String, Int64)] = [("ms", 1), ("s", 1_000), ("m", 60_000), ("h", 3_600_000)]
    guard let (unit, milliseconds) = units.first(where: { text.hasSuffix($0.0) && Int64(text.dropLast($0.0.count)) != nil }),
          let number = Int64(text.dropLast(unit.count)) else {
      throw ValidationError("\(option) '\(text)' is not an interval: a whole number and a unit, ms, s, m or h, for example 30s or 5m.")
    }
    let total = number.multipliedReportingOverflow(by: milliseconds)
    guard !total.overflow, (10...86_400_000).contains(total.partialValue) else {
      throw ValidationError("\(option) must be from 10ms to 24h, for example 30s or 5m.")
    }
    return .milliseconds(total.partialValue)
  }
}
