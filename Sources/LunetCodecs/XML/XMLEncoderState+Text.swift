import CLunetLua
import Glibc

// MARK: - Text and names

extension XMLEncoderState {

    /// Writes `s` escaped for text or for a double-quoted attribute value, checking that it is
    /// UTF-8 of XML characters. Invariant: the room left at `o` is at least the input left plus
    /// 8 (a word store); an escape makes room again.
    /// `attribute` is the attribute whose value it is (nil for text): it names the path in errors.
    mutating func escape(_ s: UnsafePointer<UInt8>, _ n: Int, attribute: XMLAttribute?) -> Bool {
        var o = out.reserve(n + 8)
        var i = 0
        while i < n {
            if n - i >= 8 {
                let w = UInt64(littleEndian: UnsafeRawPointer(s + i).loadUnaligned(as: UInt64.self))
                UnsafeMutableRawPointer(o).storeBytes(of: w.littleEndian, as: UInt64.self)
                var special = XMLScan.equal(w, UInt8(ascii: "<")) | XMLScan.equal(w, UInt8(ascii: "&"))
                    | XMLScan.equal(w, UInt8(ascii: ">")) | XMLScan.controlOrHigh(w)
                if attribute != nil { special |= XMLScan.equal(w, UInt8(ascii: "\"")) }
                if special == 0 {
                    o += 8
                    i += 8
                    continue
                }
                let plain = special.trailingZeroBitCount >> 3
                o += plain
                i += plain
            }
            let c = s[i]
            if c >= 0x80 {
                let (u, k) = UTF8Sequence.decode(s + i, n - i)
                guard k > 0 else {
                    return failText("that is not valid UTF-8 (byte \(CodecText.hex(c)) at offset \(i + 1))", attribute)
                }
                guard k != 3 || u < 0xFFFE else { return failText("containing \(LuaXMLDecoder.codePoint(u)) (not allowed in XML)", attribute) }
                for j in 0..<k { o[j] = s[i + j] }
                o += k
                i += k
                continue
            }
            let replacement: StaticString
            switch c {
            case UInt8(ascii: "<"): replacement = "&lt;"
            case UInt8(ascii: ">"): replacement = "&gt;"
            case UInt8(ascii: "&"): replacement = "&amp;"
            case UInt8(ascii: "\"") where attribute != nil: replacement = "&quot;"
            case 0x0D: replacement = "&#13;"
            case 0x0A where attribute != nil: replacement = "&#10;"
            case 0x09 where attribute != nil: replacement = "&#9;"
            case 0x0A, 0x09, 0x20...0x7F:
                o.pointee = c
                o += 1
                i += 1
                continue
            default:
                return failText("containing \(LuaXMLDecoder.codePoint(UInt32(c))) (not allowed in XML)", attribute)
            }
            out.count = o - out.base.unsafelyUnwrapped
            o = out.reserve(n - i + 8 + 6)
            (o).update(from: replacement.utf8Start, count: replacement.utf8CodeUnitCount)
            o += replacement.utf8CodeUnitCount
            i += 1
        }
        out.count = o - out.base.unsafelyUnwrapped
        return true
    }

    @inline(never)
    mutating func failText(_ problem: String, _ attribute: XMLAttribute?) -> Bool {
        guard let a = attribute else { return fail("cannot encode text \(problem)", "") }
        return fail("cannot encode an attribute value \(problem)", ".attrs" + keyPath(a.name, a.nameLength))
    }

    // MARK: names

    /// Whether the bytes are an XML Name (XML 1.0 fifth edition).
    func isName(_ s: UnsafePointer<UInt8>, _ n: Int) -> Bool {
        guard n > 0 else { return false }
        var i = 0
        var first = true
        while i < n {
            let c = s[i]
            if c < 0x80 {
                let k = classes[Int(c)] &- UInt8(ascii: "0")
                guard k & (first ? 1 : 2) != 0 else { return false }
                i += 1
            } else {
                let (u, k) = UTF8Sequence.decode(s + i, n - i)
                guard k > 0, first ? XMLScan.isNameStart(u) : XMLScan.isNameChar(u) else { return false }
                i += k
            }
            first = false
        }
        return true
    }
}
