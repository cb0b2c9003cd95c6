import CLunetLua
import Glibc

// MARK: - Numbers

extension JSONParser {

    @inline(__always)
    static func isDigit(_ c: UInt8) -> Bool { c &- UInt8(ascii: "0") < 10 }

    /// At '-' or a digit. Integers that fit in 64 bits become Lua integers; everything else is
    /// a float: exact by multiplication when both parts are exact doubles, else by Lua's own
    /// conversion (strtod, with the locale's decimal point handled).
    ///
    /// One function on purpose (issue 34): it is the per-byte loop over a number's digits,
    /// inlined into parseValues. Split into helpers (integer part, fraction, exponent, fast
    /// paths), the local cursor and the mantissa would be handed across calls that the
    /// optimiser does not always inline, which costs instructions on every digit.
    @inline(__always)
    mutating func parseNumber() -> Bool {
        // A local cursor: stepping `p` itself would store it to memory at every digit.
        let s = p
        var p = s
        defer { self.p = p }
        var negative = false
        if p.pointee == UInt8(ascii: "-") {
            negative = true
            p += 1
            guard p < end else { return fail(.unexpectedEnd("a digit"), at: p) }
        }
        var mantissa: UInt64 = 0
        var digits = 0              // significant digits in `mantissa`
        var c = p.pointee
        if c == UInt8(ascii: "0") {
            p += 1
            if p < end && Self.isDigit(p.pointee) { return fail(.leadingZero, at: p - 1) }
        } else if Self.isDigit(c) {
            repeat {
                mantissa = mantissa &* 10 &+ UInt64(c &- UInt8(ascii: "0"))
                digits += 1
                p += 1
                guard p < end else { break }
                c = p.pointee
            } while Self.isDigit(c)
        } else {
            return fail(.unexpected(c, "a digit after '-'"), at: p)
        }
        guard p < end, (p.pointee == UInt8(ascii: ".") || p.pointee | 0x20 == UInt8(ascii: "e")) else {
            // An integer.
            if digits <= 18 {
                let v = Int64(bitPattern: mantissa)
                lua_pushinteger(L, negative ? -v : v)
                return true
            }
            if digits == 19 {
                if !negative && mantissa <= UInt64(Int64.max) {
                    lua_pushinteger(L, Int64(mantissa))
                    return true
                }
                if negative && mantissa <= UInt64(Int64.max) + 1 {
                    lua_pushinteger(L, Int64(bitPattern: 0 &- mantissa))
                    return true
                }
            }
            self.p = p
            return convertNumber(from: s)
        }
        var exponent = 0
        if p.pointee == UInt8(ascii: ".") {
            p += 1
            guard p < end else { return fail(.unexpectedEnd("a digit after '.'"), at: p) }
            c = p.pointee
            guard Self.isDigit(c) else { return fail(.unexpected(c, "a digit after '.'"), at: p) }
            repeat {
                let d = UInt64(c &- UInt8(ascii: "0"))
                if mantissa != 0 || d != 0 {
                    mantissa = mantissa &* 10 &+ d
                    digits += 1
                }
                exponent -= 1
                p += 1
                guard p < end else { break }
                c = p.pointee
            } while Self.isDigit(c)
        }
        if p < end && p.pointee | 0x20 == UInt8(ascii: "e") {
            p += 1
            var negativeExponent = false
            if p < end && (p.pointee == UInt8(ascii: "+") || p.pointee == UInt8(ascii: "-")) {
                negativeExponent = p.pointee == UInt8(ascii: "-")
                p += 1
            }
            guard p < end else { return fail(.unexpectedEnd("a digit in the exponent"), at: p) }
            c = p.pointee
            guard Self.isDigit(c) else { return fail(.unexpected(c, "a digit in the exponent"), at: p) }
            var e = 0
            repeat {
                if e < 1_000_000 { e = e * 10 + Int(c &- UInt8(ascii: "0")) }
                p += 1
                guard p < end else { break }
                c = p.pointee
            } while Self.isDigit(c)
            exponent += negativeExponent ? -e : e
        }
        // Clinger's fast path: a mantissa below 2^53 and a power of ten up to 10^22 are both
        // exact doubles, so one multiplication or division rounds correctly.
        if digits <= 15 && exponent >= -22 && exponent <= 22 {
            var v = Double(mantissa)
            if exponent < 0 { v /= Self.powerOfTen(-exponent) } else if exponent > 0 { v *= Self.powerOfTen(exponent) }
            lua_pushnumber(L, negative ? -v : v)
            return true
        }
        #if arch(x86_64) || arch(i386)
        // The same one step in 80-bit extended precision, where any 19-digit mantissa and 10^27
        // are exact, then rounded to a double. That second rounding is right unless the
        // extended result lies within one of its units of a point halfway between two doubles
        // (its 11 low bits near 0x400): those few go to strtod. (The bounds keep the result far
        // from subnormals and overflow.)
        if digits <= 19 && exponent >= -27 && exponent <= 27 {
            let m = Float80(mantissa)
            let r = exponent < 0 ? m / Self.powerOfTen80(-exponent) : m * Self.powerOfTen80(exponent)
            let low = r.significandBitPattern & 0x7FF
            if low < 0x3FF || low > 0x401 {
                let v = Double(r)
                lua_pushnumber(L, negative ? -v : v)
                return true
            }
        }
        #endif
        self.p = p
        return convertNumber(from: s)
    }

    @inline(__always)
    static func powerOfTen(_ e: Int) -> Double {
        switch e {
        case 0: return 1e0
        case 1: return 1e1
        case 2: return 1e2
        case 3: return 1e3
        case 4: return 1e4
        case 5: return 1e5
        case 6: return 1e6
        case 7: return 1e7
        case 8: return 1e8
        case 9: return 1e9
        case 10: return 1e10
        case 11: return 1e11
        case 12: return 1e12
        case 13: return 1e13
        case 14: return 1e14
        case 15: return 1e15
        case 16: return 1e16
        case 17: return 1e17
        case 18: return 1e18
        case 19: return 1e19
        case 20: return 1e20
        case 21: return 1e21
        default: return 1e22
        }
    }

    #if arch(x86_64) || arch(i386)
    /// 10^e for e up to 27, exact: 10^22 and below are exact doubles, and 10^22 * 10^5 is
    /// exact in 80 bits (5^27 < 2^64).
    @inline(__always)
    static func powerOfTen80(_ e: Int) -> Float80 {
        e <= 22 ? Float80(powerOfTen(e)) : Float80(powerOfTen(22)) * Float80(powerOfTen(e - 22))
    }
    #endif

    /// The slow path: the token [s, p) (already checked against JSON's grammar) converted by
    /// lua_stringtonumber, which gives a float for integers beyond 64 bits.
    @inline(never)
    mutating func convertNumber(from s: UnsafePointer<UInt8>) -> Bool {
        let n = p - s
        scratch.count = 0
        let text = scratch.reserve(n + 1)
        text.update(from: s, count: n)
        text[n] = 0
        guard lua_stringtonumber(L, UnsafeRawPointer(text).assumingMemoryBound(to: CChar.self)) == n + 1 else {
            return fail(.numberOutOfRange, at: s)
        }
        if lua_isinteger(L, -1) == 0 {
            let v = lua_tonumberx(L, -1, nil)
            if v.isInfinite || v.isNaN {
                lua_settop(L, -2)
                return fail(.numberOutOfRange, at: s)
            }
        }
        return true
    }
}
