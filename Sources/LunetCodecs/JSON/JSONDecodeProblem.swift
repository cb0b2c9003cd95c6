extension LuaJSONDecoder {

    /// What went wrong, named for the message.
    enum Problem {
        case none
        case emptyInput
        case unexpectedEnd(String)
        case unexpected(UInt8, String)
        case trailing(UInt8)
        case controlInString(UInt8)
        case invalidEscape(UInt8)
        case invalidUnicodeEscape
        case loneSurrogate(UInt32)
        case invalidUTF8(UInt8)
        case leadingZero
        case expectedDigit(String)
        case numberOutOfRange
        case tooDeep(Int)
        case luaStackExhausted
        case invalidLiteral(String)

        var text: String {
            switch self {
            case .none: return "no error"
            case .emptyInput: return "empty input (expected a JSON value)"
            case .unexpectedEnd(let expecting): return "unexpected end of input (expected \(expecting))"
            case .unexpected(let c, let expecting): return "unexpected \(describe(c)) (expected \(expecting))"
            case .trailing(let c): return "unexpected \(describe(c)) after the JSON value"
            case .controlInString(let c): return "unescaped control character \(hex(c)) in string"
            case .invalidEscape(let c): return "invalid escape \(c >= 0x21 && c < 0x7F ? "'\\\(Character(Unicode.Scalar(c)))'" : "'\\' followed by \(describe(c))") in string"
            case .invalidUnicodeEscape: return "invalid \\u escape (expected 4 hexadecimal digits)"
            case .loneSurrogate(let u): return "lone UTF-16 surrogate \\u\(hex4(u)) in string (a surrogate must be part of a high/low pair)"
            case .invalidUTF8(let c): return "invalid UTF-8 (byte \(hex(c)))"
            case .leadingZero: return "leading zero in number"
            case .expectedDigit(let what): return "expected a digit \(what)"
            case .numberOutOfRange: return "number out of range for a double"
            case .tooDeep(let n): return "nesting too deep (more than \(n) levels of arrays and objects)"
            case .luaStackExhausted: return "nesting too deep for the Lua stack"
            case .invalidLiteral(let word): return "invalid literal (expected '\(word)')"
            }
        }

        private func describe(_ c: UInt8) -> String {
            if c >= 0x21 && c < 0x7F { return "character '\(Character(Unicode.Scalar(c)))'" }
            if c == 0x20 { return "space" }
            return "byte \(hex(c))"
        }
        private func hex(_ c: UInt8) -> String { CodecText.hex(c) }
        private func hex4(_ u: UInt32) -> String {
            let digits = Array("0123456789ABCDEF")
            return String((0..<4).map { digits[Int((u >> (12 - 4 * UInt32($0))) & 15)] })
        }
    }
}
