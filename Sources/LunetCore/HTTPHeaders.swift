/// An ordered list of header fields. Names compare case-insensitively; order and repeats are kept
/// because they matter (Set-Cookie) and because people read them in the order the server sent.
public struct HTTPHeaders: Sendable, Sequence {
    public private(set) var fields: [(name: String, value: String)] = []

    public init() {}
    public init(_ pairs: [(String, String)]) { for (n, v) in pairs { add(n, v) } }

    /// Fields from header lines as a server sent them ("Name: value", one per line, CR LF or
    /// LF). Spaces and tabs around names and values are dropped; a line without a colon is
    /// skipped. Parsed as bytes: Character-level String work costs ~50x more.
    public init(parsingLines lines: UnsafeBufferPointer<UInt8>) {
        guard let b = lines.baseAddress else { return }
        let n = lines.count
        var start = 0
        while start < n {
            var end = start
            while end < n && b[end] != 0x0A { end += 1 }
            let next = end + 1
            while end > start && (b[end - 1] == 0x0D || b[end - 1] == 0x0A) { end -= 1 }
            var colon = start
            while colon < end && b[colon] != 0x3A { colon += 1 }
            if colon < end {
                var nameEnd = colon
                while nameEnd > start && (b[nameEnd - 1] == 0x20 || b[nameEnd - 1] == 0x09) { nameEnd -= 1 }
                var valueStart = colon + 1
                while valueStart < end && (b[valueStart] == 0x20 || b[valueStart] == 0x09) { valueStart += 1 }
                var valueEnd = end
                while valueEnd > valueStart && (b[valueEnd - 1] == 0x20 || b[valueEnd - 1] == 0x09) { valueEnd -= 1 }
                fields.append((String(decoding: UnsafeBufferPointer(start: b + start, count: nameEnd - start), as: UTF8.self),
                               String(decoding: UnsafeBufferPointer(start: b + valueStart, count: valueEnd - valueStart), as: UTF8.self)))
            }
            start = next
        }
    }

    public var count: Int { fields.count }
    public func makeIterator() -> IndexingIterator<[(name: String, value: String)]> { fields.makeIterator() }

    public mutating func add(_ name: String, _ value: String) { fields.append((name, value)) }

    /// Replaces every field of that name with one (or removes them all when value is nil).
    public mutating func set(_ name: String, _ value: String?) {
        fields.removeAll { $0.name.caseInsensitiveEquals(name) }
        if let value { fields.append((name, value)) }
    }

    public mutating func remove(_ name: String) { set(name, nil) }

    /// The first value of that name.
    public subscript(name: String) -> String? {
        fields.first { $0.name.caseInsensitiveEquals(name) }?.value
    }

    public func all(_ name: String) -> [String] {
        fields.filter { $0.name.caseInsensitiveEquals(name) }.map(\.value)
    }

    public func contains(_ name: String) -> Bool { self[name] != nil }

    /// `other`'s fields replace ours by name; the rest keep their place. Compared in place: a
    /// request's own fields over its session's, every request that has some (a set of
    /// lower-cased names made a String each and a Set a request).
    public func merging(_ other: HTTPHeaders) -> HTTPHeaders {
        if other.fields.isEmpty { return self }
        if fields.isEmpty { return other }
        var result = self
        result.fields.removeAll { mine in other.fields.contains { $0.name.caseInsensitiveEquals(mine.name) } }
        result.fields.append(contentsOf: other.fields)
        return result
    }
}

extension String {
    /// ASCII case-insensitive equality (header names are tokens), over the UTF-8 bytes in place:
    /// a zip of the two UTF-8 views cost ~120 instructions a comparison, and a gRPC call makes ~50.
    @inlinable
    func caseInsensitiveEquals(_ other: String) -> Bool {
        guard utf8.count == other.utf8.count else { return false }
        var a = self, b = other
        return a.withUTF8 { x in
            b.withUTF8 { y in
                for i in 0..<x.count where x[i] != y[i] {
                    let p = x[i] | 0x20
                    if p != y[i] | 0x20 || !(p >= 0x61 && p <= 0x7a) { return false }
                }
                return true
            }
        }
    }
}
