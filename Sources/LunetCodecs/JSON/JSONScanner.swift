import Glibc

/// The JSON decoder's reading of the bytes: the position, whitespace and literals, strings
/// (checked as UTF-8, unescaped into a scratch buffer reused for the whole document) and
/// numbers, and the first failure. It knows nothing of Lua: JSONParser builds the values from
/// what it reads.
struct JSONScanner {
    let start: UnsafePointer<UInt8>
    let end: UnsafePointer<UInt8>
    var p: UnsafePointer<UInt8>
    /// Decoded bytes of the string being unescaped, and NUL-terminated number text.
    var scratch = ByteWriter(owner: "the JSON codec")
    var failure: LuaJSONDecoder.Problem = .none
    var failureOffset = 0

    init(start: UnsafePointer<UInt8>, end: UnsafePointer<UInt8>) {
        self.start = start
        self.end = end
        self.p = start
    }

    @inline(never)
    mutating func fail(_ problem: LuaJSONDecoder.Problem, at q: UnsafePointer<UInt8>) -> Bool {
        failure = problem
        failureOffset = q - start
        return false
    }

    /// `fail` for the scans that return a value: records the failure, returns nil.
    @inline(never)
    mutating func failed<T>(_ problem: LuaJSONDecoder.Problem, at q: UnsafePointer<UInt8>) -> T? {
        _ = fail(problem, at: q)
        return nil
    }

    @inline(__always)
    mutating func skipWhitespace() {
        while p < end {
            let c = p.pointee
            if c > 0x20 { return }
            guard c == 0x20 || c == 0x0A || c == 0x0D || c == 0x09 else { return }
            p += 1
        }
    }

    /// `word` (4 bytes, read as a little-endian integer) at p; advances 4 bytes.
    @inline(__always)
    mutating func literal(_ word: UInt32, _ name: String) -> Bool {
        guard end - p >= 4, UnsafeRawPointer(p).loadUnaligned(as: UInt32.self) == UInt32(littleEndian: word) else {
            return fail(.invalidLiteral(name), at: p)
        }
        p += 4
        return true
    }
}
