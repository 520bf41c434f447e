import ODRBase
import Foundation
@testable import ODRAge
@testable import ODRSigning
import Testing


/// The field arithmetic behind ssh-ed25519 recipients, at its own level:
/// constants against values computed independently (Python's big
/// integers), the curve check on points and non-points.
@Suite struct Field25519Tests {
  static func hex(_ text: String) -> [UInt8] {
    stride(from: 0, to: text.count, by: 2).map { UInt8(text.dropFirst($0).prefix(2), radix: 16)! }
  }

  /// 4/5, the y of Ed25519's base point.
  static let baseY = hex("5866666666666666666666666666666666666666666666666666666666666666")

  @Test func dIsMinus121665Over121666() {
    #expect(Field25519.edwardsD.littleEndianBytes == Self.hex("a3785913ca4deb75abd841414d0a700098e879777940c78c73fe6f2bee6c0352"))
  }

  @Test func inverseAndArithmetic() {
    let five = Field25519(5)
    #expect(five * five.inverse == .one)
    #expect(Field25519(4) * five.inverse == Field25519(littleEndian: Self.baseY))
    #expect((Field25519(0) - .one) + .one == Field25519(0))
    #expect(Field25519(0).inverse.isZero)
  }

  /// y = 2, 7, 8 and 11 are on no point of the curve; 3, 4, 5 and the base
  /// point's y are (Euler's criterion on (y² − 1) / (d·y² + 1), in Python).
  @Test(arguments: [(2, false), (3, true), (4, true), (5, true), (7, false), (8, false), (11, false)])
  func smallYOnTheCurve(y: UInt64, onCurve: Bool) {
    #expect(Field25519.isEdwardsY(Field25519(y)) == onCurve)
  }

  @Test func theBasePointIsOnTheCurve() {
    #expect(Field25519.isEdwardsY(Field25519(littleEndian: Self.baseY)))
  }

  /// An ssh-ed25519 public key whose y is on no point is refused when it is
  /// read, as age refuses it; a real key is read.
  @Test func anSSHKeyOffTheCurveIsRefused() throws {
    func line(_ key: [UInt8]) -> String {
      func string(_ bytes: [UInt8]) -> [UInt8] { withUnsafeBytes(of: UInt32(bytes.count).bigEndian, Array.init) + bytes }
      return "ssh-ed25519 " + Data(string(Array("ssh-ed25519".utf8)) + string(key)).base64EncodedString()
    }
    var offCurve = [UInt8](repeating: 0, count: 32)
    offCurve[0] = 2
    let error = #expect(throws: TrustError.self) { try AgeRecipient(line(offCurve)) }
    #expect(error?.message.contains("not a point of Ed25519") == true)
    _ = try AgeRecipient(line(Self.baseY))
  }

  @Test(arguments: [
    ([0x01], [0x02], true),
    ([0x02], [0x02], false),
    ([0x00, 0x00, 0x01], [0x02], true),
    ([0x01, 0x00], [0xff], false),
    ([0xfe, 0xff], [0x00, 0xff, 0x00], true),
    ([0xff, 0x01], [0xff, 0x00], false),
    ([], [0x01], true),
  ] as [([UInt8], [UInt8], Bool)])
  func aCiphertextMustBeBelowTheModulus(ciphertext: [UInt8], modulus: [UInt8], below: Bool) {
    #expect(RSAOAEP.isBelow(ciphertext, modulus) == below)
  }
}
