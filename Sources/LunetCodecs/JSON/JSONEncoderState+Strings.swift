import CLunetLua
import Glibc

// MARK: - Strings

extension JSONEncoderState {

    /// Writes `"…"`. Invariant: the room left at `o` is at least the input left plus 9 (eight
    /// bytes of a word store and the closing quote); an escape makes room again.
    mutating func string(_ s: UnsafePointer<UInt8>, _ n: Int, isKey: Bool) -> Bool {
        var o = out.reserve(n + 10)
        o.pointee = UInt8(ascii: "\"")
        o += 1
        var i = 0
        while i < n {
            if n - i >= 8 {
                // Copy eight bytes; keep those before the first special one.
                let w = UnsafeRawPointer(s + i).loadUnaligned(as: UInt64.self)
                UnsafeMutableRawPointer(o).storeBytes(of: w, as: UInt64.self)
                let special = JSONScan.specialBytes(UInt64(littleEndian: w))
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
                let k = UTF8Sequence.length(s + i, n - i)
                guard k > 0 else { return failUTF8(s, n, at: i, isKey: isKey) }
                for j in 0..<k { o[j] = s[i + j] }
                o += k
                i += k
                continue
            }
            if c >= 0x20 && c != UInt8(ascii: "\"") && c != UInt8(ascii: "\\") {
                o.pointee = c
                o += 1
                i += 1
                continue
            }
            // An escape: up to six bytes for one.
            out.count = o - out.base.unsafelyUnwrapped
            o = out.reserve(n - i + 6 + 9)
            o[0] = UInt8(ascii: "\\")
            switch c {
            case UInt8(ascii: "\""), UInt8(ascii: "\\"): o[1] = c; o += 2
            case 0x0A: o[1] = UInt8(ascii: "n"); o += 2
            case 0x0D: o[1] = UInt8(ascii: "r"); o += 2
            case 0x09: o[1] = UInt8(ascii: "t"); o += 2
            case 0x08: o[1] = UInt8(ascii: "b"); o += 2
            case 0x0C: o[1] = UInt8(ascii: "f"); o += 2
            default:
                let hex = UnsafeRawPointer(("0123456789abcdef" as StaticString).utf8Start).assumingMemoryBound(to: UInt8.self)
                o[1] = UInt8(ascii: "u")
                o[2] = UInt8(ascii: "0")
                o[3] = UInt8(ascii: "0")
                o[4] = hex[Int(c >> 4)]
                o[5] = hex[Int(c & 15)]
                o += 6
            }
            i += 1
        }
        o.pointee = UInt8(ascii: "\"")
        o += 1
        out.count = o - out.base.unsafelyUnwrapped
        return true
    }

    @inline(never)
    mutating func failUTF8(_ s: UnsafePointer<UInt8>, _ n: Int, at i: Int, isKey: Bool) -> Bool {
        let what = isKey ? "a key" : "a string"
        return fail("cannot encode \(what) that is not valid UTF-8 (byte \(CodecText.hex(s[i])) at offset \(i + 1)) at \(pathString(depth))")
    }
}
