extension LuaXMLDecoder {
    /// What went wrong, named for the message. Offsets point into the input; names and the
    /// text around them are read from it only when the message is made.
    enum Problem {
        case none
        case emptyInput
        case noRoot
        case unexpectedEnd(StaticString)
        case unexpected(StaticString)                    // the character at the failure offset
        case unclosed(name: Int, length: Int)            // offset of the name in the start tag
        case mismatched(found: Int, foundLength: Int, open: Int, openLength: Int)
        case unexpectedAttribute(StaticString, name: Int, length: Int)
        case duplicateAttribute(length: Int)
        case lessThanInAttribute
        case invalidUTF8
        case invalidCharacter(UInt32)
        case unknownEntity(length: Int, doctype: Bool)
        case bareAmpersand
        case malformedCharacterReference
        case invalidCharacterReference(length: Int, UInt32)
        case cdataEndInText
        case doubleHyphenInComment
        case tooDeep(Int)
        case luaStackExhausted
        case encoding(length: Int)
        case notASCII(name: Int, length: Int)
        case utf16(StaticString)
        case badDeclaration(StaticString)
        case declarationNotAtStart
        case doctypeMisplaced(StaticString)
        case cdataOutsideRoot
        case textOutsideRoot(after: Bool)
        case secondRoot(length: Int)

        func text(_ bytes: UnsafeRawBufferPointer, _ offset: Int) -> String {
            func name(_ at: Int, _ length: Int) -> String {
                let n = max(0, min(length, bytes.count - at, 80))
                let text = String(decoding: UnsafeRawBufferPointer(rebasing: bytes[at..<(at + n)]), as: UTF8.self)
                return length > 80 ? text + "…" : text
            }
            func place(_ at: Int) -> String {
                let (line, column) = TextDecodeError.lineColumn(bytes, at)
                return "line \(line), column \(column)"
            }
            let here = LuaXMLDecoder.describe(bytes, offset)
            switch self {
            case .none: return "no error"
            case .emptyInput: return "empty input (expected an XML document)"
            case .noRoot: return "no root element (the document ends before one)"
            case .unexpectedEnd(let expecting): return "unexpected end of input (expected \(expecting))"
            case .unexpected(let expecting): return "unexpected \(here) (expected \(expecting))"
            case .unclosed(let at, let length):
                return "unexpected end of input: <\(name(at, length))> (opened on \(place(at - 1))) is not closed"
            case .mismatched(let found, let foundLength, let open, let openLength):
                return "mismatched end tag </\(name(found, foundLength))>: expected </\(name(open, openLength))> to close <\(name(open, openLength))> opened on \(place(open - 1))"
            case .unexpectedAttribute(let expecting, let at, let length):
                return "unexpected \(here) (expected \(expecting) after attribute name '\(name(at, length))')"
            case .duplicateAttribute(let length): return "duplicate attribute '\(name(offset, length))'"
            case .lessThanInAttribute: return "'<' in an attribute value (write &lt;)"
            case .invalidUTF8: return "invalid UTF-8 (byte \(CodecText.hex(bytes[offset])))"
            case .invalidCharacter(let u): return "invalid character \(LuaXMLDecoder.codePoint(u)) (not allowed in XML)"
            case .unknownEntity(let length, let doctype):
                let why = doctype ? "entities declared in a DOCTYPE are not expanded"
                                  : "XML defines only &lt; &gt; &amp; &quot; &apos; and character references"
                return "unknown entity '\(name(offset, length))' (\(why))"
            case .bareAmpersand: return "'&' not followed by an entity or character reference (write &amp;)"
            case .malformedCharacterReference: return "malformed character reference (expected '&#' digits ';' or '&#x' hex digits ';')"
            case .invalidCharacterReference(let length, let u):
                let what = u > 0x10FFFF ? "beyond U+10FFFF" : "\(LuaXMLDecoder.codePoint(u)) is not allowed in XML"
                return "invalid character reference '\(name(offset, length))' (\(what))"
            case .cdataEndInText: return "']]>' in text (write ]]&gt;)"
            case .doubleHyphenInComment: return "'--' inside a comment"
            case .tooDeep(let n): return "nesting too deep (more than \(n) levels of elements)"
            case .luaStackExhausted: return "nesting too deep for the Lua stack"
            case .encoding(let length):
                return "the document declares encoding \"\(name(offset, length))\", but xml.decode reads UTF-8 only: convert the body to UTF-8 first (as r.text does) and decode it with { ignore_encoding = true }"
            case .notASCII(let at, let length):
                return "byte \(CodecText.hex(bytes[offset])) is not \(name(at, length)), the encoding the document declares: convert the body to UTF-8 first (as r.text does) and decode it with { ignore_encoding = true }"
            case .utf16(let how): return "the document is UTF-16 (\(how)): convert the body to UTF-8 first (as r.text does)"
            case .badDeclaration(let what): return "malformed XML declaration (\(what))"
            case .declarationNotAtStart: return "an XML declaration ('<?xml ...?>') is allowed only at the very start of the document"
            case .doctypeMisplaced(let what): return "DOCTYPE \(what)"
            case .cdataOutsideRoot: return "CDATA section outside the root element"
            case .textOutsideRoot(let after): return "text \(after ? "after" : "before") the root element (unexpected \(here))"
            case .secondRoot(let length):
                return "a second root element <\(name(offset + 1, length))> (a document has one root element)"
            }
        }
    }

    /// The thing at `offset` for a message: "character 'x'", "space", "character 'é' (U+00E9)",
    /// "byte 0xFF", "end of input".
    static func describe(_ bytes: UnsafeRawBufferPointer, _ offset: Int) -> String {
        guard offset >= 0 && offset < bytes.count else { return "end of input" }
        let c = bytes[offset]
        if c >= 0x21 && c < 0x7F { return "character '\(Character(Unicode.Scalar(c)))'" }
        if c == 0x20 { return "space" }
        if c == 0x0A { return "line feed" }
        if c == 0x09 { return "tab" }
        if c == 0x0D { return "carriage return" }
        if c >= 0xC2 && c <= 0xF4 {
            let n = c >= 0xF0 ? 4 : c >= 0xE0 ? 3 : 2
            if offset + n <= bytes.count {
                let slice = UnsafeRawBufferPointer(rebasing: bytes[offset..<(offset + n)])
                var iterator = slice.makeIterator()
                var decoder = UTF8()
                if case .scalarValue(let scalar) = decoder.decode(&iterator) {
                    return "character '\(Character(scalar))' (\(codePoint(scalar.value)))"
                }
            }
        }
        return "byte \(CodecText.hex(c))"
    }

    static func codePoint(_ u: UInt32) -> String {
        var digits = String(u, radix: 16, uppercase: true)
        while digits.count < 4 { digits = "0" + digits }
        return "U+" + digits
    }
}
