/// Character classes of ASCII bytes, one digit per byte value: 1 name start, 2 name character,
/// 4 whitespace (bytes >= 0x80 are classified by XMLParser.nameCharacter).
let xmlByteClasses: StaticString = "0000000004400400000000000000000040000000000002202222222222300000033333333333333333333333333000030333333333333333333333333330000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000"

enum XMLScan {
    static let ones: UInt64 = 0x0101_0101_0101_0101
    static let highs: UInt64 = 0x8080_8080_8080_8080

    /// The high bit of each byte equal to `c` (the lowest one set is exact).
    @inline(__always)
    static func equal(_ w: UInt64, _ c: UInt8) -> UInt64 {
        let v = w ^ (ones &* UInt64(c))
        return (v &- ones) & ~v & highs
    }

    /// The high bit of each byte below 0x20 or at least 0x80 (the lowest one set is exact).
    @inline(__always)
    static func controlOrHigh(_ w: UInt64) -> UInt64 {
        ((w &- ones &* 0x20) & ~w & highs) | (w & highs)
    }

    /// Text: '<', '&', ']', controls (CR, LF, tab included) and non-ASCII.
    @inline(__always)
    static func textSpecial(_ w: UInt64) -> UInt64 {
        equal(w, UInt8(ascii: "<")) | equal(w, UInt8(ascii: "&")) | equal(w, UInt8(ascii: "]")) | controlOrHigh(w)
    }

    /// An attribute value in `quote`: the quote, '<', '&', controls and non-ASCII.
    @inline(__always)
    static func valueSpecial(_ w: UInt64, _ quote: UInt8) -> UInt64 {
        equal(w, quote) | equal(w, UInt8(ascii: "<")) | equal(w, UInt8(ascii: "&")) | controlOrHigh(w)
    }

    /// CDATA content: ']', controls and non-ASCII.
    @inline(__always)
    static func cdataSpecial(_ w: UInt64) -> UInt64 {
        equal(w, UInt8(ascii: "]")) | controlOrHigh(w)
    }

    /// Whether a code point may appear in an XML 1.0 document.
    @inline(__always)
    static func isXMLChar(_ u: UInt32) -> Bool {
        if u < 0x20 { return u == 0x09 || u == 0x0A || u == 0x0D }
        if u < 0xD800 { return true }
        if u < 0xE000 { return false }
        if u < 0xFFFE { return true }
        return u >= 0x10000 && u <= 0x10FFFF
    }

    /// XML 1.0 (fifth edition) NameStartChar, beyond ASCII.
    static func isNameStart(_ u: UInt32) -> Bool {
        switch u {
        case 0xC0...0xD6, 0xD8...0xF6, 0xF8...0x2FF, 0x370...0x37D, 0x37F...0x1FFF, 0x200C...0x200D,
             0x2070...0x218F, 0x2C00...0x2FEF, 0x3001...0xD7FF, 0xF900...0xFDCF, 0xFDF0...0xFFFD,
             0x10000...0xEFFFF:
            return true
        default:
            return false
        }
    }

    /// NameChar, beyond ASCII.
    static func isNameChar(_ u: UInt32) -> Bool {
        isNameStart(u) || u == 0xB7 || (u >= 0x300 && u <= 0x36F) || u == 0x203F || u == 0x2040
    }
}
