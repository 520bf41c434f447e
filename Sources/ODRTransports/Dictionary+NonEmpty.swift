extension [String: String] {
  /// The variable `name` when set and not empty: an empty AWS variable is
  /// not set, as the AWS tools read them.
  package func nonEmpty(_ name: String) -> String? {
    self[name].flatMap { $0.isEmpty ? nil : $0 }
  }
}
