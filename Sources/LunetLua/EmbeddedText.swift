import Glibc

/// Decoding the text lunet-luac stores each lua/ file's bytecode and source as: every seven bytes
/// of the file as eight bytes below 0x80, seven bits each, low bits first (lunet-luac's `literal`
/// says why). The text is a whole number of eight-byte groups; `count` is the file's real size.
enum EmbeddedText {
    static func decode(_ text: UnsafeBufferPointer<UInt8>, count: Int) -> [UInt8] {
        let groups = text.count / 8
        precondition(text.count % 8 == 0 && count <= groups * 7, "embedded text of a wrong size")
        guard let source = UnsafeRawPointer(text.baseAddress), groups > 0 else { return [] }
        // Runs at every start over the bytecode of the modules the program loads: per group, one
        // load, three shift-and-mask steps that close the gaps (pairs of 7 bits into 14, then 28,
        // then 56), one store of eight bytes whose last the next group's store overwrites (so
        // the buffer has one byte to spare).
        return [UInt8](unsafeUninitializedCapacity: groups * 7 + 1) { out, written in
            let target = UnsafeMutableRawPointer(out.baseAddress!)
            var i = 0, o = 0
            while i < groups * 8 {
                var x = UInt64(littleEndian: source.loadUnaligned(fromByteOffset: i, as: UInt64.self))
                x = (x & 0x007F_007F_007F_007F) | ((x >> 1) & 0x3F80_3F80_3F80_3F80)
                x = (x & 0x0000_3FFF_0000_3FFF) | ((x >> 2) & 0x0FFF_C000_0FFF_C000)
                x = (x & 0x0000_0000_0FFF_FFFF) | ((x >> 4) & 0x00FF_FFFF_F000_0000)
                target.storeBytes(of: x.littleEndian, toByteOffset: o, as: UInt64.self)
                i += 8
                o += 7
            }
            written = count
        }
    }

    /// Gives back the pages of `text` (a literal of the executable, never written) that lie
    /// wholly inside it: they leave the resident set, stay in the page cache, and come back
    /// from the file if read again. A module's text is read once, when it loads; without this
    /// the pages read (and the 64 KB around each that the kernel maps with it) stayed resident
    /// for the life of the process. Only pages wholly inside: a page shared with other data is
    /// left alone (MADV_DONTNEED would drop a private copy of anything written there).
    static func release(_ text: UnsafeRawBufferPointer) {
        guard let base = text.baseAddress else { return }
        let page = Int(sysconf(Int32(_SC_PAGESIZE)))
        let start = (Int(bitPattern: base) + page - 1) / page * page
        let end = (Int(bitPattern: base) + text.count) / page * page
        guard end > start, let p = UnsafeMutableRawPointer(bitPattern: start) else { return }
        _ = madvise(p, end - start, Int32(MADV_DONTNEED))
    }
}
