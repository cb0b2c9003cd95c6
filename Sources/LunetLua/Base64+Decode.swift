import LunetCore

/// Decoding base64, which only the embedded-Lua loader needs: lunet-luac stores each lua/ file's
/// bytecode and source as base64 text (LuaHost.loadEmbedded).
extension Base64 {
    /// A character's value, or 0xFF for one outside the alphabet. Arithmetic, not a table: a
    /// table made at first use (and the alphabet array it came from) was a third of the
    /// decoder's cost at start-up.
    @inline(__always)
    private static func value(_ c: UInt8) -> UInt8 {
        switch c {
        case 65...90: return c &- 65     // A-Z
        case 97...122: return c &- 71    // a-z
        case 48...57: return c &+ 4      // 0-9
        case 43: return 62               // +
        case 47: return 63               // /
        default: return 0xFF
        }
    }

    /// Decodes base64 text (padding optional, no line breaks); stops at the first byte that is
    /// not base64.
    static func decode(_ text: StaticString) -> [UInt8] {
        text.withUTF8Buffer { decode($0) }
    }

    static func decode(_ b: UnsafeBufferPointer<UInt8>) -> [UInt8] {
        // Runs at every start-up over the embedded bytecode: four characters to three bytes
        // per step, through unchecked buffer pointers.
        [UInt8](unsafeUninitializedCapacity: b.count / 4 * 3 + 3) { out, count in
                let n = b.count
                var i = 0, o = 0
                while i + 4 <= n {
                    let w = value(b[i]), x = value(b[i + 1]), y = value(b[i + 2]), z = value(b[i + 3])
                    if (w | x | y | z) & 0x80 != 0 { break }     // padding or the end
                    out[o] = w << 2 | x >> 4
                    out[o + 1] = x << 4 | y >> 2
                    out[o + 2] = y << 6 | z
                    i += 4
                    o += 3
                }
                // The last group (with padding, or cut short).
                var acc: UInt32 = 0
                var bits = 0
                while i < n {
                    let v = value(b[i])
                    if v & 0x80 != 0 { break }
                    acc = acc << 6 | UInt32(v)
                    bits += 6
                    if bits >= 8 {
                        bits -= 8
                        out[o] = UInt8(truncatingIfNeeded: acc >> UInt32(bits))
                        o += 1
                    }
                    i += 1
                }
                count = o
        }
    }
}
