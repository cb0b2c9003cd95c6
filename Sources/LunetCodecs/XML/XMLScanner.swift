import Glibc

/// The XML decoder's reading of the bytes: the position, XML's characters and names checked as
/// XML 1.0 (fifth edition) has them, the markup that is skipped (comments, processing
/// instructions, the DOCTYPE), the XML declaration, references, and the first failure. It
/// knows nothing of Lua: XMLParser builds the element tables from what it reads.
struct XMLScanner {
    let start: UnsafePointer<UInt8>
    let end: UnsafePointer<UInt8>
    var p: UnsafePointer<UInt8>
    let classes: UnsafePointer<UInt8>
    /// Read the bytes as UTF-8 whatever the declaration says (they were converted).
    let ignoreEncoding: Bool
    /// A DOCTYPE was skipped: an unknown entity may be one it declares (the message says so).
    var sawDoctype = false
    var failure: LuaXMLDecoder.Problem = .none
    var failureOffset = 0

    init(start: UnsafePointer<UInt8>, end: UnsafePointer<UInt8>, ignoreEncoding: Bool) {
        self.start = start
        self.end = end
        self.p = start
        self.classes = UnsafeRawPointer(xmlByteClasses.utf8Start).assumingMemoryBound(to: UInt8.self)
        self.ignoreEncoding = ignoreEncoding
    }

    @inline(never)
    mutating func fail(_ problem: LuaXMLDecoder.Problem, at q: UnsafePointer<UInt8>) -> Bool {
        failure = problem
        failureOffset = q - start
        return false
    }

    /// "unexpected end of input" at the end, else "unexpected <thing here>".
    @inline(never)
    mutating func failHere(_ expecting: StaticString) -> Bool {
        if p >= end { return fail(.unexpectedEnd(expecting), at: end) }
        return fail(.unexpected(expecting), at: p)
    }

    // MARK: bytes

    @inline(__always)
    func byteClass(_ c: UInt8) -> UInt8 { classes[Int(c)] &- UInt8(ascii: "0") }

    @inline(__always)
    func at(_ s: StaticString) -> Bool {
        let n = s.utf8CodeUnitCount
        return end - p >= n && memcmp(p, s.utf8Start, n) == 0
    }

    /// Skips XML whitespace; returns whether there was any.
    @inline(__always)
    @discardableResult
    mutating func skipWhitespace() -> Bool {
        let s = p
        while p < end && byteClass(p.pointee) & 4 != 0 { p += 1 }
        return p > s
    }

    /// At a byte >= 0x80: one well-formed UTF-8 sequence of an XML character; moves past it.
    @inline(__always)
    mutating func skipNonASCII() -> Bool {
        let (u, n) = UTF8Sequence.decode(p, end - p)
        if n == 0 { return failUTF8() }
        if n == 3 && u >= 0xFFFE { return fail(.invalidCharacter(u), at: p) }
        p += n
        return true
    }

    /// Names the first byte that makes the sequence at p invalid.
    @inline(never)
    mutating func failUTF8() -> Bool {
        let (at, truncated) = UTF8Sequence.failure(p, end)
        return fail(truncated ? .unexpectedEnd("the rest of a UTF-8 sequence") : .invalidUTF8, at: at)
    }

    /// One character of markup that is skipped (comments, PIs, DOCTYPE): checked, not kept.
    @inline(__always)
    mutating func skipCharacter() -> Bool {
        let c = p.pointee
        if c >= 0x80 { return skipNonASCII() }
        if c < 0x20 && byteClass(c) & 4 == 0 { return fail(.invalidCharacter(UInt32(c)), at: p) }
        p += 1
        return true
    }

    /// At what should be a Name: moves past it. Fails expecting `what` when there is none.
    @inline(__always)
    mutating func scanName(_ what: StaticString) -> Bool {
        guard p < end else { return fail(.unexpectedEnd(what), at: p) }
        let c = p.pointee
        if byteClass(c) & 1 != 0 {
            p += 1
        } else if c >= 0x80 {
            guard nameCharacter(first: true, what) else { return false }
        } else {
            return fail(.unexpected(what), at: p)
        }
        while p < end {
            let c = p.pointee
            if byteClass(c) & 2 != 0 {
                p += 1
            } else if c >= 0x80 {
                let save = p
                guard nameCharacter(first: false, what) else {
                    // Not a name character: the name ends here (unless the bytes are bad).
                    if case .invalidUTF8 = failure { return false }
                    if case .unexpectedEnd = failure { return false }
                    failure = .none
                    p = save
                    return true
                }
            } else {
                break
            }
        }
        return true
    }

    /// At a byte >= 0x80 in a name: moves past it if it is a name character.
    @inline(never)
    mutating func nameCharacter(first: Bool, _ what: StaticString) -> Bool {
        let (u, n) = UTF8Sequence.decode(p, end - p)
        if n == 0 { return failUTF8() }
        guard first ? XMLScan.isNameStart(u) : XMLScan.isNameChar(u) else { return fail(.unexpected(what), at: p) }
        p += n
        return true
    }
}
