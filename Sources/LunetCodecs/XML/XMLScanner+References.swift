import CLunetLua
import Glibc

// MARK: - References: the five entities and character references

extension XMLScanner {
    /// At '&': the character the reference stands for (p moves past its ';'), or nil after
    /// recording the failure.
    mutating func parseReference() -> UInt32? {
        let amp = p
        p += 1
        guard p < end else {
            _ = fail(.unexpectedEnd("an entity or character reference after '&'"), at: p)
            return nil
        }
        if p.pointee == UInt8(ascii: "#") {
            p += 1
            var hex = false
            if p < end && p.pointee == UInt8(ascii: "x") {
                hex = true
                p += 1
            }
            var v: UInt32 = 0
            var digits = 0
            while p < end {
                let c = p.pointee
                var d: UInt32
                if c &- UInt8(ascii: "0") < 10 {
                    d = UInt32(c &- UInt8(ascii: "0"))
                } else if hex && (c | 0x20) &- UInt8(ascii: "a") < 6 {
                    d = UInt32((c | 0x20) &- UInt8(ascii: "a")) + 10
                } else {
                    break
                }
                if v <= 0x10FFFF { v = v * (hex ? 16 : 10) + d }
                digits += 1
                p += 1
            }
            guard digits > 0 else {
                _ = p < end ? fail(.malformedCharacterReference, at: amp) : fail(.unexpectedEnd("the digits of a character reference"), at: p)
                return nil
            }
            guard referenceEnd("';' to end the character reference", otherwise: .malformedCharacterReference, amp) else { return nil }
            guard XMLScan.isXMLChar(v) else {
                _ = fail(.invalidCharacterReference(length: p - amp, v), at: amp)
                return nil
            }
            return v
        }
        // A named entity: only XML's five.
        let left = end - p
        if left >= 3 && p[2] == UInt8(ascii: ";") && p[1] == UInt8(ascii: "t") {
            if p[0] == UInt8(ascii: "l") { p += 3; return 0x3C }
            if p[0] == UInt8(ascii: "g") { p += 3; return 0x3E }
        }
        if left >= 4 && memcmp(p, "amp;", 4) == 0 { p += 4; return 0x26 }
        if left >= 5 && memcmp(p, "quot;", 5) == 0 { p += 5; return 0x22 }
        if left >= 5 && memcmp(p, "apos;", 5) == 0 { p += 5; return 0x27 }
        let c = p.pointee
        guard byteClass(c) & 1 != 0 || c >= 0x80 else {
            _ = fail(.bareAmpersand, at: amp)
            return nil
        }
        guard scanName("an entity name") else {
            if case .unexpected = failure { _ = fail(.bareAmpersand, at: amp) }
            return nil
        }
        guard referenceEnd("';' to end the entity reference", otherwise: .bareAmpersand, amp) else { return nil }
        _ = fail(.unknownEntity(length: p - amp, doctype: sawDoctype), at: amp)
        return nil
    }

    /// At what should be the ';' that ends the reference at `amp`: moves past it, or fails
    /// (the end of the input as such, any other byte as `otherwise`, at the '&').
    @inline(__always)
    mutating func referenceEnd(_ expecting: StaticString, otherwise: LuaXMLDecoder.Problem, _ amp: UnsafePointer<UInt8>) -> Bool {
        guard p < end else { return fail(.unexpectedEnd(expecting), at: p) }
        guard p.pointee == UInt8(ascii: ";") else { return fail(otherwise, at: amp) }
        p += 1
        return true
    }
}
