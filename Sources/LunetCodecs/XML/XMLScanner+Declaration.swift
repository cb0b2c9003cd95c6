import CLunetLua
import Glibc

// MARK: - The XML declaration

extension XMLScanner {
    /// Whether the n bytes at s are `word` (lowercase ASCII), in any case.
    static func equalsIgnoringCase(_ s: UnsafePointer<UInt8>, _ n: Int, _ word: StaticString) -> Bool {
        guard n == word.utf8CodeUnitCount else { return false }
        for i in 0..<n {
            var c = s[i]
            if c >= UInt8(ascii: "A") && c <= UInt8(ascii: "Z") { c |= 0x20 }
            if c != word.utf8Start[i] { return false }
        }
        return true
    }

    /// At "<?xml" + whitespace or '?': version (required), encoding, standalone, in that order.
    mutating func parseDeclaration() -> Bool {
        let lt = p
        p += 5
        var seen = 0
        while true {
            let space = skipWhitespace()
            guard p < end else { return fail(.unexpectedEnd("'?>' to end the XML declaration"), at: p) }
            if p.pointee == UInt8(ascii: "?") {
                p += 1
                guard p < end && p.pointee == UInt8(ascii: ">") else { return failHere("'>' after '?' in the XML declaration") }
                p += 1
                guard seen >= 1 else { return fail(.badDeclaration("the version is missing"), at: lt) }
                return true
            }
            guard space else { return fail(.unexpected("whitespace or '?>' in the XML declaration"), at: p) }
            let name = p
            while p < end && (p.pointee | 0x20) &- UInt8(ascii: "a") < 26 { p += 1 }
            let which: Int
            if p - name == 7 && memcmp(name, "version", 7) == 0 {
                which = 1
            } else if p - name == 8 && memcmp(name, "encoding", 8) == 0 {
                which = 2
            } else if p - name == 10 && memcmp(name, "standalone", 10) == 0 {
                which = 3
            } else {
                p = name
                return fail(.badDeclaration("expected version, encoding or standalone"), at: name)
            }
            guard which > seen else { p = name; return fail(.badDeclaration("version, encoding and standalone must come once each, in that order"), at: name) }
            guard which == 1 || seen >= 1 else { p = name; return fail(.badDeclaration("the version must come first"), at: name) }
            seen = which
            skipWhitespace()
            guard p < end && p.pointee == UInt8(ascii: "=") else { return failHere("'=' in the XML declaration") }
            p += 1
            skipWhitespace()
            guard p < end && (p.pointee == UInt8(ascii: "\"") || p.pointee == UInt8(ascii: "'")) else { return failHere("a quoted value in the XML declaration") }
            let quote = p.pointee
            p += 1
            let value = p
            while p < end && p.pointee != quote && p.pointee != UInt8(ascii: "<") && p.pointee != UInt8(ascii: ">") { p += 1 }
            guard p < end && p.pointee == quote else { return failHere("the closing quote in the XML declaration") }
            let n = p - value
            p += 1
            switch which {
            case 1:
                guard n >= 3 && value[0] == UInt8(ascii: "1") && value[1] == UInt8(ascii: ".")
                      && (2..<n).allSatisfy({ value[$0] &- UInt8(ascii: "0") < 10 }) else {
                    return fail(.badDeclaration("the version must be 1.x"), at: value)
                }
            case 2:
                let valid = n > 0 && (value[0] | 0x20) &- UInt8(ascii: "a") < 26 && (1..<max(n, 1)).allSatisfy { i in
                    let c = value[i]
                    return (c | 0x20) &- UInt8(ascii: "a") < 26 || c &- UInt8(ascii: "0") < 10
                        || c == UInt8(ascii: ".") || c == UInt8(ascii: "_") || c == UInt8(ascii: "-")
                }
                guard valid else { return fail(.badDeclaration("not an encoding name"), at: value) }
                if ignoreEncoding || Self.equalsIgnoringCase(value, n, "utf-8") { break }
                // US-ASCII is UTF-8 too, as long as every byte is ASCII.
                guard Self.equalsIgnoringCase(value, n, "us-ascii") || Self.equalsIgnoringCase(value, n, "ascii") else {
                    return fail(.encoding(length: n), at: value)
                }
                var q = start
                while q < end && q.pointee < 0x80 { q += 1 }
                if q < end { return fail(.notASCII(name: value - start, length: n), at: q) }
            default:
                guard (n == 3 && memcmp(value, "yes", 3) == 0) || (n == 2 && memcmp(value, "no", 2) == 0) else {
                    return fail(.badDeclaration("standalone must be \"yes\" or \"no\""), at: value)
                }
            }
        }
    }
}
