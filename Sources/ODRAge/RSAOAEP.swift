import ODRBase
import CGcryptRSA
import ODRSigning

/// RSA-OAEP with SHA-256 under a label, as age's ssh-rsa stanza uses it
/// (label `age-encryption.org/v1/ssh-rsa`), by libgcrypt: swift-crypto's
/// RSA takes no label. Integers are unsigned big-endian.
package enum RSAOAEP {
  package static func encrypt(_ message: [UInt8], modulus: [UInt8], exponent: [UInt8], label: String) throws -> [UInt8] {
    var out = [UInt8](repeating: 0, count: modulus.count)
    var length = out.count
    let label = Array(label.utf8)
    let status = odr_rsa_oaep_encrypt(modulus, modulus.count, exponent, exponent.count, label, label.count,
                                      message, message.count, &out, &length)
    guard status == 0 else {
      try refuseMissingLibrary(status)
      throw TrustError(.invalidKey, "Cannot encrypt to this ssh-rsa key (libgcrypt refused it).")
    }
    return Array(out.prefix(length))
  }

  /// The message, or nil when `ciphertext` does not open under this key;
  /// throws when libgcrypt cannot be loaded.
  /// A ciphertext longer than the modulus, or not below it as an integer,
  /// is refused here, as Go's `DecryptOAEP` does: libgcrypt aborts the
  /// process on some of them.
  package static func decrypt(_ ciphertext: [UInt8], modulus: [UInt8], exponent: [UInt8], privateExponent: [UInt8], label: String) throws -> [UInt8]? {
    guard isBelow(ciphertext, modulus) else { return nil }
    var out = [UInt8](repeating: 0, count: modulus.count)
    var length = out.count
    let label = Array(label.utf8)
    let status = odr_rsa_oaep_decrypt(modulus, modulus.count, exponent, exponent.count, privateExponent, privateExponent.count,
                                      label, label.count, ciphertext, ciphertext.count, &out, &length)
    guard status == 0 else {
      try refuseMissingLibrary(status)
      return nil
    }
    return Array(out.prefix(length))
  }

  /// Throws when `status` says libgcrypt could not be loaded.
  private static func refuseMissingLibrary(_ status: Int32) throws {
    guard status == ODR_GCRYPT_MISSING else { return }
    let reason = odr_gcrypt_missing().map { String(cString: $0) } ?? "libgcrypt.so.20"
    throw TrustError(.invalidKey, "ssh-rsa keys need libgcrypt, which could not be loaded (\(reason)). Install it: `sudo apt install libgcrypt20`.")
  }

  /// True when the unsigned big-endian integer `a` is less than `b`.
  package static func isBelow(_ a: [UInt8], _ b: [UInt8]) -> Bool {
    let a = a.drop { $0 == 0 }, b = b.drop { $0 == 0 }
    guard a.count == b.count else { return a.count < b.count }
    return a.lexicographicallyPrecedes(b)
  }
}
