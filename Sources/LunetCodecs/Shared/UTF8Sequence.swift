/// UTF-8 as RFC 3629 has it (no overlong forms, no surrogates, nothing above U+10FFFF), one
/// sequence at a time, on raw bytes: what every codec checks strings with.
enum UTF8Sequence {
    /// The code point of the well-formed sequence at `p` and its length, or length 0 when it
    /// is not one. `left` is how many bytes may be read from `p` (at least 1).
    @inline(__always)
    static func decode(_ p: UnsafePointer<UInt8>, _ left: Int) -> (UInt32, Int) {
        let c = p[0]
        @inline(__always) func cont(_ b: UInt8) -> Bool { b & 0xC0 == 0x80 }
        switch c {
        case 0xC2...0xDF:
            guard left >= 2, cont(p[1]) else { return (0, 0) }
            return (UInt32(c & 0x1F) << 6 | UInt32(p[1] & 0x3F), 2)
        case 0xE0...0xEF:
            guard left >= 3 else { return (0, 0) }
            let lo: UInt8 = c == 0xE0 ? 0xA0 : 0x80      // overlong
            let hi: UInt8 = c == 0xED ? 0x9F : 0xBF      // surrogates
            guard p[1] >= lo && p[1] <= hi, cont(p[2]) else { return (0, 0) }
            return (UInt32(c & 0x0F) << 12 | UInt32(p[1] & 0x3F) << 6 | UInt32(p[2] & 0x3F), 3)
        case 0xF0...0xF4:
            guard left >= 4 else { return (0, 0) }
            let lo: UInt8 = c == 0xF0 ? 0x90 : 0x80      // overlong
            let hi: UInt8 = c == 0xF4 ? 0x8F : 0xBF      // above U+10FFFF
            guard p[1] >= lo && p[1] <= hi, cont(p[2]), cont(p[3]) else { return (0, 0) }
            return (UInt32(c & 0x07) << 18 | UInt32(p[1] & 0x3F) << 12 | UInt32(p[2] & 0x3F) << 6 | UInt32(p[3] & 0x3F), 4)
        default:
            return (0, 0)
        }
    }

    /// The length of the well-formed sequence at `p`, or 0 (the check alone, no code point).
    @inline(__always)
    static func length(_ p: UnsafePointer<UInt8>, _ left: Int) -> Int {
        let c = p[0]
        switch c {
        case 0xC2...0xDF:
            return left >= 2 && p[1] & 0xC0 == 0x80 ? 2 : 0
        case 0xE0...0xEF:
            guard left >= 3 else { return 0 }
            let lo: UInt8 = c == 0xE0 ? 0xA0 : 0x80
            let hi: UInt8 = c == 0xED ? 0x9F : 0xBF
            return p[1] >= lo && p[1] <= hi && p[2] & 0xC0 == 0x80 ? 3 : 0
        case 0xF0...0xF4:
            guard left >= 4 else { return 0 }
            let lo: UInt8 = c == 0xF0 ? 0x90 : 0x80
            let hi: UInt8 = c == 0xF4 ? 0x8F : 0xBF
            return p[1] >= lo && p[1] <= hi && p[2] & 0xC0 == 0x80 && p[3] & 0xC0 == 0x80 ? 4 : 0
        default:
            return 0
        }
    }

    /// Where a sequence that `length` refused goes wrong, for the message: the first byte that
    /// cannot be part of it, or `end` with `truncated` when the input ends before it does.
    static func failure(_ p: UnsafePointer<UInt8>, _ end: UnsafePointer<UInt8>) -> (at: UnsafePointer<UInt8>, truncated: Bool) {
        let c = p.pointee
        let need = c >= 0xF0 ? 4 : c >= 0xE0 ? 3 : c >= 0xC0 ? 2 : 1
        guard c >= 0xC2 && c <= 0xF4 else { return (p, false) }
        var i = 1
        while i < need && p + i < end && p[i] & 0xC0 == 0x80 && !(i == 1 && (
            (c == 0xE0 && p[1] < 0xA0) || (c == 0xED && p[1] > 0x9F) ||
            (c == 0xF0 && p[1] < 0x90) || (c == 0xF4 && p[1] > 0x8F))) {
            i += 1
        }
        if i < need {
            if p + i >= end { return (end, true) }
            return (p + i, false)
        }
        return (p, false)
    }

    /// Writes the code point `u` as UTF-8 (1 to 4 bytes) at `out`; returns the length.
    @inline(__always)
    static func write(_ u: UInt32, to out: UnsafeMutablePointer<UInt8>) -> Int {
        if u < 0x80 {
            out[0] = UInt8(u)
            return 1
        }
        if u < 0x800 {
            out[0] = UInt8(0xC0 | (u >> 6))
            out[1] = UInt8(0x80 | (u & 0x3F))
            return 2
        }
        if u < 0x10000 {
            out[0] = UInt8(0xE0 | (u >> 12))
            out[1] = UInt8(0x80 | ((u >> 6) & 0x3F))
            out[2] = UInt8(0x80 | (u & 0x3F))
            return 3
        }
        out[0] = UInt8(0xF0 | (u >> 18))
        out[1] = UInt8(0x80 | ((u >> 12) & 0x3F))
        out[2] = UInt8(0x80 | ((u >> 6) & 0x3F))
        out[3] = UInt8(0x80 | (u & 0x3F))
        return 4
    }
}
