/// Pieces of the codecs' error messages: bytes shown as text a person can read.
enum CodecText {
    /// "0x7F"
    static func hex(_ c: UInt8) -> String {
        let digits = Array("0123456789ABCDEF")
        return "0x" + String(digits[Int(c >> 4)]) + String(digits[Int(c & 15)])
    }

    /// A Lua string quoted for a message: printable ASCII as is, `"` and `\` escaped, other
    /// bytes as \xHH; past 60 bytes cut, with "…" after the closing quote.
    static func quote(_ p: UnsafePointer<UInt8>, _ n: Int) -> String {
        var text = "\""
        for b in UnsafeBufferPointer(start: p, count: min(n, 60)) {
            switch b {
            case UInt8(ascii: "\""): text += "\\\""
            case UInt8(ascii: "\\"): text += "\\\\"
            case 0x20..<0x7F: text.unicodeScalars.append(Unicode.Scalar(b))
            default: text += "\\x" + String(hex(b).dropFirst(2))
            }
        }
        return text + "\"" + (n > 60 ? "…" : "")
    }

    /// Whether the bytes are a Lua identifier (a path shows it as `.name`, else `["name"]`).
    static func isIdentifier(_ p: UnsafePointer<UInt8>, _ n: Int) -> Bool {
        guard n > 0, !(p[0] >= UInt8(ascii: "0") && p[0] <= UInt8(ascii: "9")) else { return false }
        for i in 0..<n {
            let b = p[i]
            guard (b >= UInt8(ascii: "a") && b <= UInt8(ascii: "z")) || (b >= UInt8(ascii: "A") && b <= UInt8(ascii: "Z"))
                || (b >= UInt8(ascii: "0") && b <= UInt8(ascii: "9")) || b == UInt8(ascii: "_") else { return false }
        }
        return true
    }
}
