import LunetCore

/// Decoding base64, which only the embedded-Lua loader needs: lunet-luac stores each lua/ file's
/// bytecode and source as base64 text (LuaHost.loadEmbedded).
extension Base64 {
    /// Each ASCII character's value (0-63), or 64 for one outside the alphabet: a table in the
    /// binary's read-only data, ready with no work at start-up (a Swift array would be made at
    /// first use; comparing ranges cost 5% more instructions over the bytecode a GET loads).
    private static let values: StaticString = "\u{40}\u{40}\u{40}\u{40}\u{40}\u{40}\u{40}\u{40}\u{40}\u{40}\u{40}\u{40}\u{40}\u{40}\u{40}\u{40}\u{40}\u{40}\u{40}\u{40}\u{40}\u{40}\u{40}\u{40}\u{40}\u{40}\u{40}\u{40}\u{40}\u{40}\u{40}\u{40}\u{40}\u{40}\u{40}\u{40}\u{40}\u{40}\u{40}\u{40}\u{40}\u{40}\u{40}\u{3E}\u{40}\u{40}\u{40}\u{3F}\u{34}\u{35}\u{36}\u{37}\u{38}\u{39}\u{3A}\u{3B}\u{3C}\u{3D}\u{40}\u{40}\u{40}\u{40}\u{40}\u{40}\u{40}\u{0}\u{1}\u{2}\u{3}\u{4}\u{5}\u{6}\u{7}\u{8}\u{9}\u{A}\u{B}\u{C}\u{D}\u{E}\u{F}\u{10}\u{11}\u{12}\u{13}\u{14}\u{15}\u{16}\u{17}\u{18}\u{19}\u{40}\u{40}\u{40}\u{40}\u{40}\u{40}\u{1A}\u{1B}\u{1C}\u{1D}\u{1E}\u{1F}\u{20}\u{21}\u{22}\u{23}\u{24}\u{25}\u{26}\u{27}\u{28}\u{29}\u{2A}\u{2B}\u{2C}\u{2D}\u{2E}\u{2F}\u{30}\u{31}\u{32}\u{33}\u{40}\u{40}\u{40}\u{40}\u{40}"

    @inline(__always)
    private static func value(_ table: UnsafePointer<UInt8>, _ c: UInt8) -> UInt8 {
        c < 128 ? table[Int(c)] : 0x40
    }

    /// Decodes base64 text (padding optional, no line breaks); stops at the first byte that is
    /// not base64.
    static func decode(_ text: StaticString) -> [UInt8] {
        text.withUTF8Buffer { decode($0) }
    }

    static func decode(_ b: UnsafeBufferPointer<UInt8>) -> [UInt8] {
        // Runs at every start-up over the embedded bytecode: four characters to three bytes
        // per step, through unchecked buffer pointers.
        let table = values.utf8Start
        return [UInt8](unsafeUninitializedCapacity: b.count / 4 * 3 + 3) { out, count in
                let n = b.count
                var i = 0, o = 0
                while i + 4 <= n {
                    let w = value(table, b[i]), x = value(table, b[i + 1]), y = value(table, b[i + 2]), z = value(table, b[i + 3])
                    if (w | x | y | z) & 0x40 != 0 { break }     // padding or the end
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
                    let v = value(table, b[i])
                    if v & 0x40 != 0 { break }
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
