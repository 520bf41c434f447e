import ArgumentParser
import ODRKeyring

/// `--ttl` of `odr set` and `odr fetch`: how long keys written to the
/// kernel store live. The kernel keeps a user's keys until reboot — past
/// logout, and past the account (a new account given the freed uid reads
/// them) — so a server can bound that.
struct KernelLifetimeOption: ParsableArguments {
  @Option(help: ArgumentHelp("With --store kernel: the keys written expire after this long (12h, 30d, 2w; every write, and every fetch of unchanged keys, starts it again). Default: until deleted or reboot.", valueName: "duration"))
  var ttl: String?

  func validate() throws {
    if let ttl { _ = try DurationText.seconds(ttl, option: "--ttl") }
  }

  /// `store` writing with the lifetime, or `store` itself without --ttl;
  /// refused for a store that has no lifetime (the Secret Service).
  func applied(to store: any SecretStore) throws -> any SecretStore {
    guard let ttl else { return store }
    guard var kernel = store as? KernelKeyringStore else {
      throw ValidationError("--ttl applies to the kernel store (--store kernel); Secret Service items stay until deleted (odr delete).")
    }
    kernel.lifetime = .seconds(try DurationText.seconds(ttl, option: "--ttl"))
    return kernel
  }
}
