import CLunetLua
import Glibc

// MARK: - Markup that is skipped: comments, processing instructions, the DOCTYPE

extension XMLScanner {
    @inline(never)
    mutating func failMarkup() -> Bool {
        if end - p < 9 && memcmp(p, "<![CDATA[", min(9, end - p)) == 0 { return fail(.unexpectedEnd("'<![CDATA['"), at: end) }
        if end - p < 9 && memcmp(p, "<!DOCTYPE", min(9, end - p)) == 0 { return fail(.unexpectedEnd("'<!DOCTYPE'"), at: end) }
        if end - p < 4 && memcmp(p, "<!--", min(4, end - p)) == 0 { return fail(.unexpectedEnd("'<!--'"), at: end) }
        p += 2
        return failHere("'--' or '[CDATA[' after '<!'")
    }

    /// At "<!--": moves past "-->".
    mutating func skipComment() -> Bool {
        p += 4
        while true {
            guard p < end else { return fail(.unexpectedEnd("'-->' to close the comment"), at: p) }
            if p.pointee == UInt8(ascii: "-") && end - p >= 2 && p[1] == UInt8(ascii: "-") {
                guard end - p >= 3 else { return fail(.unexpectedEnd("'-->' to close the comment"), at: end) }
                guard p[2] == UInt8(ascii: ">") else { return fail(.doubleHyphenInComment, at: p) }
                p += 3
                return true
            }
            guard skipCharacter() else { return false }
        }
    }

    /// At "<?": moves past "?>". The target "xml" (any case) is reserved for the declaration.
    mutating func skipPI() -> Bool {
        let lt = p
        p += 2
        let target = p
        guard scanName("a processing instruction target after '<?'") else { return false }
        if p - target == 3 && (target[0] | 0x20) == UInt8(ascii: "x") && (target[1] | 0x20) == UInt8(ascii: "m") && (target[2] | 0x20) == UInt8(ascii: "l") {
            return fail(.declarationNotAtStart, at: lt)
        }
        if at("?>") {
            p += 2
            return true
        }
        guard skipWhitespace() else { return failHere("whitespace or '?>' after the processing instruction target") }
        while true {
            guard p < end else { return fail(.unexpectedEnd("'?>' to close the processing instruction"), at: p) }
            if p.pointee == UInt8(ascii: "?") && end - p >= 2 && p[1] == UInt8(ascii: ">") {
                p += 2
                return true
            }
            guard skipCharacter() else { return false }
        }
    }

    /// At "<!DOCTYPE": moves past its '>'. Nothing in it is read: no entity it declares is ever
    /// expanded, no external DTD fetched, no default attribute applied.
    mutating func skipDoctype() -> Bool {
        sawDoctype = true
        p += 9
        guard skipWhitespace() else { return failHere("whitespace after '<!DOCTYPE'") }
        guard scanName("the document type name") else { return false }
        while true {
            skipWhitespace()
            guard p < end else { return fail(.unexpectedEnd("'>' to end the DOCTYPE"), at: p) }
            let c = p.pointee
            if c == UInt8(ascii: ">") {
                p += 1
                return true
            }
            if c == UInt8(ascii: "\"") || c == UInt8(ascii: "'") {
                guard skipQuoted() else { return false }
            } else if c == UInt8(ascii: "[") {
                p += 1
                guard skipInternalSubset() else { return false }
            } else if byteClass(c) & 1 != 0 {
                guard scanName("a keyword") else { return false }
            } else {
                return fail(.unexpected("'>' to end the DOCTYPE"), at: p)
            }
        }
    }

    mutating func skipQuoted() -> Bool {
        let quote = p.pointee
        p += 1
        while true {
            guard p < end else { return fail(.unexpectedEnd("the closing quote"), at: p) }
            if p.pointee == quote {
                p += 1
                return true
            }
            guard skipCharacter() else { return false }
        }
    }

    /// After '[': declarations, comments, PIs and parameter-entity references, up to ']'.
    mutating func skipInternalSubset() -> Bool {
        while true {
            skipWhitespace()
            guard p < end else { return fail(.unexpectedEnd("']' to end the DOCTYPE's internal subset"), at: p) }
            let c = p.pointee
            if c == UInt8(ascii: "]") {
                p += 1
                return true
            }
            if c == UInt8(ascii: "%") {
                p += 1
                guard scanName("a parameter entity name after '%'") else { return false }
                guard p < end && p.pointee == UInt8(ascii: ";") else { return failHere("';' after a parameter entity reference") }
                p += 1
            } else if at("<!--") {
                guard skipComment() else { return false }
            } else if at("<?") {
                guard skipPI() else { return false }
            } else if at("<!") && end - p > 2 && byteClass(p[2]) & 1 != 0 {
                // <!ENTITY ...>, <!ELEMENT ...>, <!ATTLIST ...>, <!NOTATION ...>: to its '>'.
                p += 2
                while true {
                    guard p < end else { return fail(.unexpectedEnd("'>' to end the markup declaration"), at: p) }
                    let d = p.pointee
                    if d == UInt8(ascii: ">") {
                        p += 1
                        break
                    }
                    if d == UInt8(ascii: "\"") || d == UInt8(ascii: "'") {
                        guard skipQuoted() else { return false }
                    } else if d == UInt8(ascii: "<") {
                        return fail(.unexpected("'>' to end the markup declaration"), at: p)
                    } else {
                        guard skipCharacter() else { return false }
                    }
                }
            } else {
                return fail(.unexpected("a markup declaration or ']' in the DOCTYPE"), at: p)
            }
        }
    }
}
