import CLunetLua

/// The character data between two tags, gathered as the parser meets it. While it is one slice
/// of the input it stays there and is pushed from the input, with no copy; a reference, a
/// normalized line end, or a comment or PI in the middle copies it into `scratch`. Attribute
/// values borrow `scratch` between runs (a start tag never falls inside one).
struct XMLTextRun {
    var start: UnsafePointer<UInt8>? = nil
    var end: UnsafePointer<UInt8>? = nil
    /// The run is in `scratch`, not in the input.
    var copied = false
    /// The run has more than whitespace written as such: alone, whitespace is formatting.
    var hasContent = false
    var scratch = ByteWriter(owner: "the XML codec")

    /// Adds n bytes at s to the scratch (n may be 0).
    @inline(__always)
    mutating func scratchAppend(_ s: UnsafePointer<UInt8>, _ n: Int) {
        guard n > 0 else { return }
        scratch.append(s, n)
    }

    /// Adds the input bytes [s, e).
    @inline(__always)
    mutating func append(_ s: UnsafePointer<UInt8>, _ e: UnsafePointer<UInt8>) {
        guard e > s else { return }
        if !copied {
            guard let start else {
                self.start = s
                end = e
                return
            }
            if end == s {
                end = e
                return
            }
            copyToScratch(start)
        }
        scratchAppend(s, e - s)
    }

    @inline(never)
    mutating func copyToScratch(_ s: UnsafePointer<UInt8>?) {
        copied = true
        scratch.count = 0
        if let s { scratchAppend(s, end.unsafelyUnwrapped - s) }
        start = nil
    }

    /// Adds a character that is not in the input as such (a reference, a normalized line end).
    @inline(__always)
    mutating func append(scalar u: UInt32) {
        if !copied { copyToScratch(start) }
        scratch.appendUTF8(u)
    }

    /// Ends the run and starts the next: pushes it and returns true, unless it is dropped
    /// (empty, or only literal whitespace without `keepWhitespace`).
    @inline(__always)
    mutating func push(_ L: OpaquePointer, keepWhitespace: Bool) -> Bool {
        defer {
            start = nil
            copied = false
            hasContent = false
        }
        guard hasContent || keepWhitespace else { return false }
        if copied {
            guard scratch.count > 0 else { return false }
            lua_pushlstring(L, UnsafeRawPointer(scratch.base.unsafelyUnwrapped).assumingMemoryBound(to: CChar.self), scratch.count)
        } else {
            guard let s = start else { return false }
            lua_pushlstring(L, UnsafeRawPointer(s).assumingMemoryBound(to: CChar.self), end.unsafelyUnwrapped - s)
        }
        return true
    }
}
