import CLunetLua
import Glibc

// MARK: - Text, CDATA, attribute values

extension XMLParser {
    /// Ends the text run: pushes it as a child unless it is dropped.
    @inline(__always)
    mutating func flushText() -> Bool {
        guard text.push(L, keepWhitespace: keepWhitespace) else { return true }
        return addChild()
    }

    /// At character data inside an element: adds it to the text run, up to the next '<' (or
    /// the end of the input, which the caller reports).
    mutating func parseText() -> Bool {
        var s = p
        if !text.hasContent {
            // Leading whitespace: alone, it is formatting.
            while p < end {
                let c = p.pointee
                if c == 0x20 || c == 0x0A || c == 0x09 {
                    p += 1
                } else if c == 0x0D {
                    text.append(s, p)
                    text.append(scalar: 0x0A)
                    p += 1
                    if p < end && p.pointee == 0x0A { p += 1 }
                    s = p
                } else {
                    break
                }
            }
            if p >= end || p.pointee == UInt8(ascii: "<") {
                text.append(s, p)
                return true
            }
            text.hasContent = true
        }
        while true {
            while end - p >= 8 {
                let special = XMLScan.textSpecial(UInt64(littleEndian: UnsafeRawPointer(p).loadUnaligned(as: UInt64.self)))
                if special != 0 {
                    p += special.trailingZeroBitCount >> 3
                    break
                }
                p += 8
            }
            guard p < end else {
                text.append(s, p)
                return true
            }
            let c = p.pointee
            switch c {
            case UInt8(ascii: "<"):
                text.append(s, p)
                return true
            case 0x0A, 0x09:
                p += 1
            case UInt8(ascii: "&"):
                text.append(s, p)
                guard let u = scanner.parseReference() else { return false }
                text.append(scalar: u)
                s = p
            case 0x0D:
                text.append(s, p)
                text.append(scalar: 0x0A)
                p += 1
                if p < end && p.pointee == 0x0A { p += 1 }
                s = p
            case UInt8(ascii: "]"):
                if end - p >= 3 && p[1] == UInt8(ascii: "]") && p[2] == UInt8(ascii: ">") { return fail(.cdataEndInText, at: p) }
                p += 1
            default:
                if c >= 0x80 {
                    guard scanner.skipNonASCII() else { return false }
                } else if c < 0x20 {
                    return fail(.invalidCharacter(UInt32(c)), at: p)
                } else {
                    p += 1
                }
            }
        }
    }

    /// At "<![CDATA[": its content joins the text run as it is (line ends normalized).
    mutating func parseCDATA() -> Bool {
        p += 9
        var s = p
        while true {
            while end - p >= 8 {
                let special = XMLScan.cdataSpecial(UInt64(littleEndian: UnsafeRawPointer(p).loadUnaligned(as: UInt64.self)))
                if special != 0 {
                    p += special.trailingZeroBitCount >> 3
                    break
                }
                p += 8
            }
            guard p < end else { return fail(.unexpectedEnd("']]>' to close the CDATA section"), at: p) }
            let c = p.pointee
            if c == UInt8(ascii: "]") {
                if end - p >= 3 && p[1] == UInt8(ascii: "]") && p[2] == UInt8(ascii: ">") {
                    if p > s { text.hasContent = true }
                    text.append(s, p)
                    p += 3
                    return true
                }
                p += 1
            } else if c == 0x0D {
                text.hasContent = true
                text.append(s, p)
                text.append(scalar: 0x0A)
                p += 1
                if p < end && p.pointee == 0x0A { p += 1 }
                s = p
            } else if c >= 0x80 {
                guard scanner.skipNonASCII() else { return false }
            } else if c < 0x20 && c != 0x0A && c != 0x09 {
                return fail(.invalidCharacter(UInt32(c)), at: p)
            } else {
                p += 1
            }
        }
    }

    /// At the opening quote: pushes the value (references replaced, whitespace normalized).
    mutating func parseAttributeValue() -> Bool {
        let quote = p.pointee
        p += 1
        let s = p
        var segment = p
        var inScratch = false
        while true {
            while end - p >= 8 {
                let special = XMLScan.valueSpecial(UInt64(littleEndian: UnsafeRawPointer(p).loadUnaligned(as: UInt64.self)), quote)
                if special != 0 {
                    p += special.trailingZeroBitCount >> 3
                    break
                }
                p += 8
            }
            guard p < end else { return fail(.unexpectedEnd("the closing quote of the attribute value"), at: p) }
            let c = p.pointee
            if c == quote {
                if inScratch {
                    text.scratchAppend(segment, p - segment)
                    lua_pushlstring(L, UnsafeRawPointer(text.scratch.base.unsafelyUnwrapped).assumingMemoryBound(to: CChar.self), text.scratch.count)
                } else {
                    lua_pushlstring(L, UnsafeRawPointer(s).assumingMemoryBound(to: CChar.self), p - s)
                }
                p += 1
                return true
            }
            switch c {
            case UInt8(ascii: "<"):
                return fail(.lessThanInAttribute, at: p)
            case UInt8(ascii: "&"):
                if !inScratch {
                    inScratch = true
                    text.scratch.count = 0
                }
                text.scratchAppend(segment, p - segment)
                guard let u = scanner.parseReference() else { return false }
                text.scratch.appendUTF8(u)
                segment = p
            case 0x09, 0x0A, 0x0D:
                if !inScratch {
                    inScratch = true
                    text.scratch.count = 0
                }
                text.scratchAppend(segment, p - segment)
                text.scratch.append(0x20)
                p += 1
                if c == 0x0D && p < end && p.pointee == 0x0A { p += 1 }
                segment = p
            default:
                if c >= 0x80 {
                    guard scanner.skipNonASCII() else { return false }
                } else if c < 0x20 {
                    return fail(.invalidCharacter(UInt32(c)), at: p)
                } else {
                    p += 1
                }
            }
        }
    }
}
