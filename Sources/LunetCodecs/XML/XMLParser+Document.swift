import CLunetLua
import Glibc

// MARK: - The document: the prolog, the root element, what may follow it

extension XMLParser {
    mutating func parseDocument() -> Bool {
        if end - p >= 3 && p[0] == 0xEF && p[1] == 0xBB && p[2] == 0xBF {
            p += 3
        } else if end - p >= 2 && ((p[0] == 0xFE && p[1] == 0xFF) || (p[0] == 0xFF && p[1] == 0xFE)) {
            return fail(.utf16("a UTF-16 byte order mark"), at: p)
        } else if end - p >= 2 && ((p[0] == 0 && p[1] == UInt8(ascii: "<")) || (p[0] == UInt8(ascii: "<") && p[1] == 0)) {
            return fail(.utf16("'<' is followed or preceded by a zero byte"), at: p)
        }
        if scanner.at("<?xml") && end - p > 5 && (scanner.byteClass(p[5]) & 4 != 0 || p[5] == UInt8(ascii: "?")) {
            guard scanner.parseDeclaration() else { return false }
        }
        // The prolog: whitespace, comments, PIs, one DOCTYPE; then the root element.
        while true {
            scanner.skipWhitespace()
            guard p < end else { return fail(.noRoot, at: p) }
            guard p.pointee == UInt8(ascii: "<") else { return fail(.textOutsideRoot(after: false), at: p) }
            guard end - p >= 2 else { return fail(.unexpectedEnd("an element name after '<'"), at: end) }
            let c = p[1]
            if c == UInt8(ascii: "?") {
                guard scanner.skipPI() else { return false }
            } else if c == UInt8(ascii: "!") {
                if scanner.at("<!--") {
                    guard scanner.skipComment() else { return false }
                } else if scanner.at("<!DOCTYPE") {
                    if scanner.sawDoctype { return fail(.doctypeMisplaced("appears twice (a document has at most one)"), at: p) }
                    guard scanner.skipDoctype() else { return false }
                } else if scanner.at("<![CDATA[") {
                    return fail(.cdataOutsideRoot, at: p)
                } else {
                    return scanner.failMarkup()
                }
            } else {
                break
            }
        }
        guard parseStartTag() else { return false }
        if depth > 0 {
            guard parseContent() else { return false }
        }
        // After the root: whitespace, comments and PIs only.
        while true {
            scanner.skipWhitespace()
            guard p < end else { return true }
            guard p.pointee == UInt8(ascii: "<") else { return fail(.textOutsideRoot(after: true), at: p) }
            guard end - p >= 2 else { return fail(.textOutsideRoot(after: true), at: p) }
            let c = p[1]
            if c == UInt8(ascii: "?") {
                guard scanner.skipPI() else { return false }
            } else if scanner.at("<!--") {
                guard scanner.skipComment() else { return false }
            } else if scanner.at("<!DOCTYPE") {
                return fail(.doctypeMisplaced("after the root element (it must come before it)"), at: p)
            } else if scanner.at("<![CDATA[") {
                return fail(.cdataOutsideRoot, at: p)
            } else if scanner.byteClass(c) & 1 != 0 || c >= 0x80 {
                let s = p
                p += 1
                let nameStart = p
                _ = scanner.scanName("a name")
                return fail(.secondRoot(length: p - nameStart), at: s)
            } else {
                return fail(.textOutsideRoot(after: true), at: p)
            }
        }
    }

    /// Element content, until the root closes. Iterative: the open elements are `frames`.
    mutating func parseContent() -> Bool {
        while true {
            guard p < end else {
                let frame = frames.unsafelyUnwrapped[depth - 1]
                return fail(.unclosed(name: frame.name - start, length: frame.nameLength), at: end)
            }
            if p.pointee != UInt8(ascii: "<") {
                guard parseText() else { return false }
                continue
            }
            guard end - p >= 2 else { return fail(.unexpectedEnd("an element name after '<'"), at: end) }
            switch p[1] {
            case UInt8(ascii: "/"):
                guard flushText(), parseEndTag() else { return false }
                if depth == 0 { return true }
            case UInt8(ascii: "!"):
                if scanner.at("<!--") {
                    guard scanner.skipComment() else { return false }
                } else if scanner.at("<![CDATA[") {
                    guard parseCDATA() else { return false }
                } else if scanner.at("<!DOCTYPE") {
                    return fail(.doctypeMisplaced("inside an element (it must come before the root element)"), at: p)
                } else {
                    return scanner.failMarkup()
                }
            case UInt8(ascii: "?"):
                guard scanner.skipPI() else { return false }
            default:
                guard flushText(), parseStartTag() else { return false }
            }
        }
    }
}
