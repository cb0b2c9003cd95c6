import Glibc

/// One line of a response's head as libcurl hands it to the header callback, read in place
/// (the bytes stay curl's): what kind of line it is, and for the two fields lunet acts on while
/// the head arrives (Content-Encoding, Transfer-Encoding), their value. A value, no curl: the
/// transfer's state machine (TransferMachine) decides what each kind means.
enum ResponseHeadLine: Equatable {
    /// "HTTP/1.1 200 OK": a response starts (after a redirect, a 100 Continue, a proxy's
    /// CONNECT). `phraseFrom`: where the reason phrase's search starts (just after the digits).
    case status(code: Int, phraseFrom: Int)
    /// A status line whose code is not exactly three digits followed by a space or the line's
    /// end (RFC 9112 §4). libcurl 8 reads "2000000" as 200 and 7.88 refuses it: lunet decides.
    case badStatus
    /// The blank line that ends a head (or a trailer section).
    case end
    /// A line without a colon: not a field, dropped.
    case notAField
    /// `Content-Encoding` or `Transfer-Encoding`, with its value as sent.
    case coding(CodingField, value: String)
    /// Any other field line.
    case field

    enum CodingField: Equatable { case content, transfer }

    /// Reads the line `b` (its CR LF included or not). `length`: the line without them.
    static func read(_ b: UnsafeBufferPointer<UInt8>) -> (line: ResponseHeadLine, length: Int) {
        var end = b.count
        while end > 0 && (b[end - 1] == 13 || b[end - 1] == 10) { end -= 1 }
        if end >= 5 && b[0] == 0x48 && b[1] == 0x54 && b[2] == 0x54 && b[3] == 0x50 && b[4] == 0x2F {   // "HTTP/"
            return (statusLine(b, end), end)
        }
        if end == 0 { return (.end, 0) }
        // memchr: the slice's own search went a byte at a time.
        guard memchr(b.baseAddress!, 0x3A, end) != nil else { return (.notAField, end) }
        let first = b[0] | 0x20
        if first == 0x63 || first == 0x74, let coding = codingField(UnsafeBufferPointer(rebasing: b[0..<end])) {   // c, t
            return (coding, end)
        }
        return (.field, end)
    }

    /// "HTTP/1.1 200 OK": the digits after the first space. At most three count: a longer
    /// number (a hostile server) must not overflow.
    private static func statusLine(_ b: UnsafeBufferPointer<UInt8>, _ end: Int) -> ResponseHeadLine {
        var i = 5
        while i < end && b[i] != 0x20 { i += 1 }
        i += 1
        var code = 0, digits = 0
        while i < end, b[i] >= 0x30 && b[i] <= 0x39 {
            if digits < 3 { code = code * 10 + Int(b[i] - 0x30) }
            digits += 1
            i += 1
        }
        if digits != 3 || (i < end && b[i] != 0x20) { return .badStatus }
        return .status(code: code, phraseFrom: i)
    }

    /// Most lines are not these two: a colon after 16 or 17 bytes ("content-encoding",
    /// "transfer-encoding") rules them out, looked at in place (no search, no String). A name
    /// of that length that is one of the two has no colon before it.
    private static func codingField(_ line: UnsafeBufferPointer<UInt8>) -> ResponseHeadLine? {
        let colon = line.count > 16 && line[16] == 0x3A ? 16 : line.count > 17 && line[17] == 0x3A ? 17 : 0
        guard colon != 0 else { return nil }
        let name = String(decoding: UnsafeBufferPointer(rebasing: line[..<colon]), as: UTF8.self).lowercased()
        let field: CodingField
        switch name {
        case "content-encoding": field = .content
        case "transfer-encoding": field = .transfer
        default: return nil
        }
        // The value without the whitespace around it, which is not part of it (RFC 9110 §5.5).
        var from = colon + 1, to = line.count
        while from < to && (line[from] == 0x20 || line[from] == 0x09) { from += 1 }
        while to > from && (line[to - 1] == 0x20 || line[to - 1] == 0x09) { to -= 1 }
        return .coding(field, value: String(decoding: UnsafeBufferPointer(rebasing: line[from..<to]), as: UTF8.self))
    }
}
