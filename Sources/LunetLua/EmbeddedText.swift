/// Decoding the text lunet-luac stores each lua/ file's bytecode and source as: one Unicode
/// scalar per byte, of the same value (U+0000-U+00FF), in the UTF-8 the compiler keeps.
enum EmbeddedText {
    static func decode(_ text: UnsafeBufferPointer<UInt8>) -> [UInt8] {
        // Runs at every start over the bytecode of the modules the program loads: a copy a
        // byte, through unchecked pointers, two bytes into one for U+0080-U+00FF.
        [UInt8](unsafeUninitializedCapacity: text.count) { out, count in
            let n = text.count
            var i = 0, o = 0
            while i < n {
                let lead = text[i]
                if lead < 0x80 {
                    out[o] = lead
                    i += 1
                } else {
                    // 110000xx 10xxxxxx. The text is the compiler's copy of what lunet-luac
                    // wrote: never cut short; if it were, the partial scalar is left out.
                    guard i + 1 < n else { break }
                    out[o] = lead << 6 | text[i + 1] & 0x3F
                    i += 2
                }
                o += 1
            }
            count = o
        }
    }
}
