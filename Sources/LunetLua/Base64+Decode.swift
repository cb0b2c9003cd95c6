import LunetCore

/// Decoding base64, which only the embedded-Lua loader needs: lunet-luac stores each lua/ file's
/// bytecode and source as base64 text (LuaHost.loadEmbedded).
extension Base64 {
    private static let values: [UInt8] = {
        var t = [UInt8](repeating: 0xFF, count: 256)
        for (i, c) in alphabet.enumerated() { t[Int(c)] = UInt8(i) }
        return t
    }()

    /// Decodes base64 text (padding optional, no line breaks); stops at the first byte that is
    /// not base64.
    static func decode(_ text: StaticString) -> [UInt8] {
        text.withUTF8Buffer { decode($0) }
    }

    static func decode(_ b: UnsafeBufferPointer<UInt8>) -> [UInt8] {
        // Runs at every start-up over the embedded bytecode: four characters to three bytes
        // per step, through unchecked buffer pointers.
        values.withUnsafeBufferPointer { table in
            [UInt8](unsafeUninitializedCapacity: b.count / 4 * 3 + 3) { out, count in
                let n = b.count
                var i = 0, o = 0
                while i + 4 <= n {
                    let w = table[Int(b[i])], x = table[Int(b[i + 1])], y = table[Int(b[i + 2])], z = table[Int(b[i + 3])]
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
                    let v = table[Int(b[i])]
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
}
