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
}
