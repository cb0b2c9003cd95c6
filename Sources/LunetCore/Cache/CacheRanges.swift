/// Byte ranges as the cache reads and writes them (RFC 9110 §14): the one range of a `Range`
/// request, the range a stored 206 holds (`Content-Range`), and two stored pieces of the same
/// representation put together (RFC 9111 §3.4). Pure values; `HTTPCache` uses them.
public enum CacheRanges {
    /// One byte range a request asks for: `first-last`, `first-` (`last` nil), or the last
    /// `suffix` bytes (`-suffix`).
    public enum Spec: Equatable, Sendable {
        case from(Int, last: Int?)
        case suffix(Int)
    }

    /// The range of `Range: bytes=…` when it names exactly one (RFC 9110 §14.1.2); nil for other
    /// units, several ranges or anything invalid: such requests go to the server.
    public static func single(_ value: String) -> Spec? {
        let v = CacheText.trimmed(value)
        guard v.lowercased().hasPrefix("bytes=") else { return nil }
        let set = CacheText.trimmed(String(v.dropFirst(6)))
        guard !set.contains(","), let dash = set.firstIndex(of: "-") else { return nil }
        let first = CacheText.trimmed(String(set[..<dash])), last = CacheText.trimmed(String(set[set.index(after: dash)...]))
        if first.isEmpty {
            guard let n = digits(last), n > 0 else { return nil }
            return .suffix(n)
        }
        guard let a = digits(first) else { return nil }
        if last.isEmpty { return .from(a, last: nil) }
        guard let b = digits(last), b >= a else { return nil }
        return .from(a, last: b)
    }

    /// The bytes `spec` selects from a representation of `length` bytes (RFC 9110 §14.1.2: a
    /// last position past the end means the end); nil when none (unsatisfiable).
    public static func resolve(_ spec: Spec, length: Int) -> ClosedRange<Int>? {
        switch spec {
        case .from(let a, let b):
            guard a < length else { return nil }
            return a...Swift.min(b ?? length - 1, length - 1)
        case .suffix(let n):
            guard length > 0 else { return nil }
            return Swift.max(0, length - n)...(length - 1)
        }
    }

    /// `Content-Range: bytes first-last/length` (length `*` when unknown); nil otherwise.
    public static func contentRange(_ value: String) -> (range: ClosedRange<Int>, length: Int?)? {
        let v = CacheText.trimmed(value)
        guard v.lowercased().hasPrefix("bytes "), let slash = v.firstIndex(of: "/") else { return nil }
        let span = CacheText.trimmed(String(v[v.index(v.startIndex, offsetBy: 6)..<slash]))
        let total = CacheText.trimmed(String(v[v.index(after: slash)...]))
        guard let dash = span.firstIndex(of: "-"), let a = digits(String(span[..<dash])),
              let b = digits(String(span[span.index(after: dash)...])), b >= a else { return nil }
        if total == "*" { return (a...b, nil) }
        guard let n = digits(total), b < n else { return nil }
        return (a...b, n)
    }

    /// The strong `ETag` of `headers`, if it has one (RFC 9110 §8.8.3): only a strong validator
    /// lets two pieces be combined (RFC 9111 §3.4).
    public static func strongValidator(_ headers: HTTPHeaders) -> String? {
        guard let tag = headers["ETag"].map(CacheText.trimmed), tag.hasPrefix("\""), tag.count >= 2 else { return nil }
        return tag
    }

    /// Two pieces of one representation as one, when they overlap or touch: the range both
    /// cover, with the newer piece's bytes where they overlap. nil when a gap lies between.
    public static func combined(older: (range: ClosedRange<Int>, bytes: UnsafeBufferPointer<UInt8>),
                                newer: (range: ClosedRange<Int>, bytes: UnsafeBufferPointer<UInt8>)) -> (range: ClosedRange<Int>, bytes: [UInt8])? {
        guard older.range.lowerBound <= newer.range.upperBound + 1, newer.range.lowerBound <= older.range.upperBound + 1 else { return nil }
        let lower = Swift.min(older.range.lowerBound, newer.range.lowerBound)
        let upper = Swift.max(older.range.upperBound, newer.range.upperBound)
        var out = [UInt8](repeating: 0, count: upper - lower + 1)
        for piece in [older, newer] {
            let start = piece.range.lowerBound - lower
            out.replaceSubrange(start..<start + piece.bytes.count, with: piece.bytes)
        }
        return (lower...upper, out)
    }

    private static func digits(_ s: String) -> Int? {
        guard !s.isEmpty, s.utf8.count <= 18, s.utf8.allSatisfy({ $0 >= 0x30 && $0 <= 0x39 }) else { return nil }
        return Int(s)
    }
}
