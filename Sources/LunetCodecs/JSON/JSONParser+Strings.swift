import CLunetLua
import Glibc

/// Eight bytes at a time.
enum JSONScan {
    /// The high bit of each byte of `w` (in little-endian order: first byte lowest) that is '"', '\\', a control
    /// character or non-ASCII; zero when there is none. The lowest bit set is exact (higher ones
    /// may be false alarms), so `trailingZeroBitCount / 8` counts the plain bytes before the
    /// first special one.
    @inline(__always)
    static func specialBytes(_ w: UInt64) -> UInt64 {
        let ones: UInt64 = 0x0101_0101_0101_0101
        let highs: UInt64 = 0x8080_8080_8080_8080
        let quote = w ^ (ones &* 0x22)
        let backslash = w ^ (ones &* 0x5C)
        let hasQuote = (quote &- ones) & ~quote
        let hasBackslash = (backslash &- ones) & ~backslash
        let hasControl = (w &- ones &* 0x20) & ~w
        return (hasQuote | hasBackslash | hasControl | w) & highs
    }
}

// MARK: - Strings

extension JSONParser {

    /// After the opening quote: pushes the string (through the key cache for a `key`) and moves
    /// past the closing quote.
    @inline(__always)
    mutating func parseString(key: Bool) -> Bool {
        // A local cursor, stored back on the way out: stepping `p` itself stores it at each step.
        let s = p
        var q = s
        while true {
            while end - q >= 8 {
                let special = JSONScan.specialBytes(UInt64(littleEndian: UnsafeRawPointer(q).loadUnaligned(as: UInt64.self)))
                if special != 0 {
                    q += special.trailingZeroBitCount >> 3
                    break
                }
                q += 8
            }
            guard q < end else { return fail(.unexpectedEnd("'\"' to close the string"), at: q) }
            let c = q.pointee
            if c == UInt8(ascii: "\"") {
                if key {
                    pushKey(s, q - s)
                } else {
                    lua_pushlstring(L, UnsafeRawPointer(s).assumingMemoryBound(to: CChar.self), q - s)
                }
                p = q + 1
                return true
            }
            if c < 0x80 {
                if c == UInt8(ascii: "\\") {
                    p = q
                    return parseEscapedString(from: s)
                }
                if c < 0x20 { return fail(.controlInString(c), at: q) }
                q += 1
            } else {
                let n = UTF8Sequence.length(q, end - q)
                guard n > 0 else {
                    p = q
                    return failUTF8()
                }
                q += n
            }
        }
    }

    /// At a byte >= 0x80: checks one well-formed UTF-8 sequence and moves past it.
    @inline(__always)
    mutating func skipUTF8Sequence() -> Bool {
        let n = UTF8Sequence.length(p, end - p)
        guard n > 0 else { return failUTF8() }
        p += n
        return true
    }

    /// Names the first byte that makes the sequence at p invalid.
    @inline(never)
    mutating func failUTF8() -> Bool {
        let (at, truncated) = UTF8Sequence.failure(p, end)
        return fail(truncated ? .unexpectedEnd("the rest of a UTF-8 sequence") : .invalidUTF8(at.pointee), at: at)
    }

    /// The string from `s` has an escape at p: decode it into the scratch buffer, then push.
    @inline(never)
    mutating func parseEscapedString(from s: UnsafePointer<UInt8>) -> Bool {
        var n = p - s
        scratch.count = 0
        scratch.reserve(n + 64).update(from: s, count: n)
        while true {
            // Room for one step: up to eight plain bytes, then one escape (at most 4 bytes of
            // UTF-8) or one UTF-8 sequence.
            if n + 16 > scratch.capacity {
                scratch.count = n
                _ = scratch.reserve(16)
            }
            var out = scratch.base.unsafelyUnwrapped + n
            if end - p >= 8 {
                // Copy eight bytes; keep those before the first special one.
                let w = UnsafeRawPointer(p).loadUnaligned(as: UInt64.self)
                UnsafeMutableRawPointer(out).storeBytes(of: w, as: UInt64.self)
                let special = JSONScan.specialBytes(UInt64(littleEndian: w))
                if special == 0 {
                    p += 8
                    n += 8
                    continue
                }
                let plain = special.trailingZeroBitCount >> 3
                p += plain
                n += plain
                out += plain
            }
            guard p < end else { return fail(.unexpectedEnd("'\"' to close the string"), at: p) }
            let c = p.pointee
            if c >= 0x80 {
                let sequence = p
                guard skipUTF8Sequence() else { return false }
                for i in 0..<(p - sequence) { out[i] = sequence[i] }
                n += p - sequence
                continue
            }
            if c >= 0x20 && c != UInt8(ascii: "\"") && c != UInt8(ascii: "\\") {
                out.pointee = c
                p += 1
                n += 1
                continue
            }
            if c == UInt8(ascii: "\"") {
                lua_pushlstring(L, UnsafeRawPointer(scratch.base.unsafelyUnwrapped).assumingMemoryBound(to: CChar.self), n)
                p += 1
                return true
            }
            if c < 0x20 { return fail(.controlInString(c), at: p) }
            // A backslash.
            guard end - p >= 2 else { return fail(.unexpectedEnd("an escape"), at: p + 1) }
            let e = p[1]
            p += 2
            switch e {
            case UInt8(ascii: "\""), UInt8(ascii: "\\"), UInt8(ascii: "/"): out.pointee = e
            case UInt8(ascii: "b"): out.pointee = 0x08
            case UInt8(ascii: "f"): out.pointee = 0x0C
            case UInt8(ascii: "n"): out.pointee = 0x0A
            case UInt8(ascii: "r"): out.pointee = 0x0D
            case UInt8(ascii: "t"): out.pointee = 0x09
            case UInt8(ascii: "u"):
                guard let scalar = unicodeEscape() else { return false }
                n += UTF8Sequence.write(scalar, to: out)
                continue
            default:
                return fail(.invalidEscape(e), at: p - 1)
            }
            n += 1
        }
    }

    /// After "\u": the code point of this escape, joined with a following low-surrogate escape.
    mutating func unicodeEscape() -> UInt32? {
        let escapeStart = p - 2
        guard let u = hex4() else { return nil }
        if u < 0xD800 || u > 0xDFFF { return u }
        if u >= 0xDC00 {
            _ = fail(.loneSurrogate(u), at: escapeStart)
            return nil
        }
        // A high surrogate: a low one must follow at once.
        guard end - p >= 6, p[0] == UInt8(ascii: "\\"), p[1] == UInt8(ascii: "u") else {
            _ = fail(.loneSurrogate(u), at: escapeStart)
            return nil
        }
        let save = p
        p += 2
        guard let low = hex4() else { return nil }
        guard low >= 0xDC00 && low <= 0xDFFF else {
            p = save
            _ = fail(.loneSurrogate(u), at: escapeStart)
            return nil
        }
        return 0x10000 + ((u - 0xD800) << 10) + (low - 0xDC00)
    }

    mutating func hex4() -> UInt32? {
        guard end - p >= 4 else {
            _ = fail(.invalidUnicodeEscape, at: p)
            return nil
        }
        var v: UInt32 = 0
        for i in 0..<4 {
            let c = p[i]
            let d: UInt32
            switch c {
            case UInt8(ascii: "0")...UInt8(ascii: "9"): d = UInt32(c - UInt8(ascii: "0"))
            case UInt8(ascii: "a")...UInt8(ascii: "f"): d = UInt32(c - UInt8(ascii: "a") + 10)
            case UInt8(ascii: "A")...UInt8(ascii: "F"): d = UInt32(c - UInt8(ascii: "A") + 10)
            default:
                _ = fail(.invalidUnicodeEscape, at: p + i)
                return nil
            }
            v = v << 4 | d
        }
        p += 4
        return v
    }
}
