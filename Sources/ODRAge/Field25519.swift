/// Arithmetic modulo p = 2^255 − 19, just enough to map an Ed25519 public
/// key to the X25519 key of the same secret (u = (1 + y) / (1 − y)), as
/// age's ssh-ed25519 recipients do. Public values only: not constant time.
package struct Field25519: Equatable {
  /// Little-endian 64-bit limbs, always reduced below p.
  private var limbs: [UInt64]

  private static let p: [UInt64] = [0xffff_ffff_ffff_ffed, .max, .max, 0x7fff_ffff_ffff_ffff]
  package static let one = Field25519(limbs: [1, 0, 0, 0])

  private init(limbs: [UInt64]) {
    self.limbs = limbs
    reduce()
  }

  /// A field element from 32 little-endian bytes, the top bit ignored (in
  /// an Ed25519 key it is the sign of x).
  package init(littleEndian bytes: [UInt8]) {
    precondition(bytes.count == 32)
    var limbs = (0..<4).map { index in
      bytes[(index * 8)..<(index * 8 + 8)].reversed().reduce(UInt64(0)) { $0 << 8 | UInt64($1) }
    }
    limbs[3] &= 0x7fff_ffff_ffff_ffff
    self.init(limbs: limbs)
  }

  /// The 32 little-endian bytes.
  package var littleEndianBytes: [UInt8] {
    limbs.flatMap { limb in (0..<8).map { UInt8(truncatingIfNeeded: limb >> ($0 * 8)) } }
  }

  package var isZero: Bool { limbs.allSatisfy { $0 == 0 } }

  package static func + (a: Self, b: Self) -> Self {
    var carry: UInt64 = 0
    var sum = [UInt64](repeating: 0, count: 4)
    for index in 0..<4 {
      let (partial, overflow1) = a.limbs[index].addingReportingOverflow(b.limbs[index])
      let (total, overflow2) = partial.addingReportingOverflow(carry)
      sum[index] = total
      carry = (overflow1 ? 1 : 0) + (overflow2 ? 1 : 0)
    }
    return Self(limbs: sum)  // both below 2^255: no carry out of the top limb
  }

  package static func - (a: Self, b: Self) -> Self {
    a + b.negated
  }

  private var negated: Self {
    isZero ? self : Self(limbs: Self.subtract(Self.p, limbs))
  }

  package static func * (a: Self, b: Self) -> Self {
    var wide = [UInt64](repeating: 0, count: 8)
    for i in 0..<4 {
      var carry: UInt128 = 0
      for j in 0..<4 {
        let value = UInt128(a.limbs[i]) * UInt128(b.limbs[j]) + UInt128(wide[i + j]) + carry
        wide[i + j] = UInt64(truncatingIfNeeded: value)
        carry = value >> 64
      }
      wide[i + 4] = UInt64(carry)
    }
    // 2^256 ≡ 38 (mod p): fold the high half onto the low one, twice.
    var folded = [UInt64](repeating: 0, count: 4)
    var carry: UInt128 = 0
    for index in 0..<4 {
      let value = UInt128(wide[index]) + UInt128(wide[index + 4]) * 38 + carry
      folded[index] = UInt64(truncatingIfNeeded: value)
      carry = value >> 64
    }
    var extra = carry * 38
    for index in 0..<4 {
      let value = UInt128(folded[index]) + extra
      folded[index] = UInt64(truncatingIfNeeded: value)
      extra = value >> 64
    }
    if extra > 0 { folded[0] += 38 }  // wrapped past 2^256: the rest is small
    return Self(limbs: folded)
  }

  /// A small field element.
  package init(_ value: UInt64) { self.init(limbs: [value, 0, 0, 0]) }

  /// The multiplicative inverse (a^(p−2)); zero stays zero.
  package var inverse: Self {
    var exponent = Self.p
    exponent[0] -= 2
    return power(exponent)
  }

  /// True when this element has a square root (Euler's criterion:
  /// a^((p−1)/2) is 1, or a is 0).
  package var isSquare: Bool {
    let legendre = power([0xffff_ffff_ffff_fff6, .max, .max, 0x3fff_ffff_ffff_ffff])
    return legendre == .one || legendre.isZero
  }

  /// Edwards25519's d = −121665 / 121666.
  package static let edwardsD = (Self(0) - Self(121_665)) * Self(121_666).inverse

  /// True when `y` is the y-coordinate of a point on edwards25519: some x
  /// satisfies −x² + y² = 1 + d·x²·y², that is x² = (y² − 1) / (d·y² + 1).
  package static func isEdwardsY(_ y: Self) -> Bool {
    let y2 = y * y
    return ((y2 - one) * (edwardsD * y2 + one).inverse).isSquare
  }

  /// self^exponent, the exponent as little-endian 64-bit limbs.
  private func power(_ exponent: [UInt64]) -> Self {
    var result = Self.one
    for limb in exponent.reversed() {
      for bit in stride(from: 63, through: 0, by: -1) {
        result = result * result
        if limb >> UInt64(bit) & 1 == 1 { result = result * self }
      }
    }
    return result
  }

  private mutating func reduce() {
    while !Self.isLess(limbs, Self.p) { limbs = Self.subtract(limbs, Self.p) }
  }

  private static func isLess(_ a: [UInt64], _ b: [UInt64]) -> Bool {
    for index in (0..<4).reversed() where a[index] != b[index] { return a[index] < b[index] }
    return false
  }

  private static func subtract(_ a: [UInt64], _ b: [UInt64]) -> [UInt64] {
    var borrow: UInt64 = 0
    var difference = [UInt64](repeating: 0, count: 4)
    for index in 0..<4 {
      let (partial, overflow1) = a[index].subtractingReportingOverflow(b[index])
      let (total, overflow2) = partial.subtractingReportingOverflow(borrow)
      difference[index] = total
      borrow = (overflow1 ? 1 : 0) + (overflow2 ? 1 : 0)
    }
    return difference
  }
}
