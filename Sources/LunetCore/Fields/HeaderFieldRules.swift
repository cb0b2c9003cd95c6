/// What may go into a request's header block. A header name or value that holds CR or LF would
/// end the field early and start another (request splitting: `X-A: foo\r\nX-Inj: 1`), and a NUL
/// cuts the value short where libcurl copies it as a C string. Every request is checked once,
/// where every request passes (Session.prepare, which WebSocket handshakes go through too), so
/// no way in (Lua tables, session files, tokens a server handed over) can skip it.
public enum HeaderFieldRules {
    /// RFC 9110 §5.6.2 tchar: the bytes a field name (and a WebSocket subprotocol) is made of.
    @inline(__always)
    static func isTokenByte(_ c: UInt8) -> Bool {
        switch c {
        case 0x30...0x39, 0x41...0x5A, 0x61...0x7A: return true   // DIGIT ALPHA
        case 0x21, 0x23, 0x24, 0x25, 0x26, 0x27, 0x2A, 0x2B, 0x2D, 0x2E, 0x5E, 0x5F, 0x60, 0x7C, 0x7E: return true  // !#$%&'*+-.^_`|~
        default: return false
        }
    }

    /// Both checks read the bytes in place (withUTF8): every field of every request with fields
    /// of its own goes through them, and a walk of the UTF-8 view cost ~40 instructions a byte.
    public static func isToken(_ text: String) -> Bool {
        var text = text
        return text.withUTF8 { b in !b.isEmpty && b.allSatisfy(isTokenByte) }
    }

    /// Why `value` cannot be sent as a field value, or nil. Only the bytes that change the
    /// request's framing are refused: CR, LF and NUL (other bytes are the server's to judge).
    public static func valueProblem(_ value: String) -> String? {
        var value = value
        return value.withUTF8 { b in
            for c in b {
                if c == 0x0D || c == 0x0A { return "a line break (CR or LF)" }
                if c == 0 { return "a NUL byte" }
            }
            return nil
        }
    }

    /// The error for a field that cannot be sent, or nil when `name: value` is a field.
    public static func problem(name: String, value: String, url: String? = nil) -> LunetError? {
        if !isToken(name) {
            return LunetError(.argument, "header name \(quoted(name)) is not a field name (letters, digits and !#$%&'*+-.^_`|~ only): refused, nothing was sent", url: url)
        }
        if let what = valueProblem(value) {
            return LunetError(.argument, "header '\(name)' has \(what) in its value: refused, nothing was sent (it would split the request)", url: url)
        }
        return nil
    }

    /// libcurl 7.88 builds a request's head in a buffer of at most 1 MB and fails past it
    /// with "out of memory" and no detail; a block that large is refused here, by name.
    public static let maxHeaderBytes = 1 << 20

    /// The first field of `headers` that cannot be sent, or a removed name that is not a name.
    public static func problem(in headers: HTTPHeaders, removed: [String] = [], url: String? = nil) -> LunetError? {
        var total = 0
        for (name, value) in headers.fields {
            if let p = problem(name: name, value: value, url: url) { return p }
            total += name.utf8.count + value.utf8.count + 4
        }
        if total > maxHeaderBytes {
            let largest = headers.fields.max { $0.value.utf8.count < $1.value.utf8.count }!
            return LunetError(.argument, "the request's header fields are \(total) bytes (the largest, '\(largest.name)', \(largest.value.utf8.count)): more than libcurl sends (\(maxHeaderBytes)); nothing was sent", url: url)
        }
        for name in removed where !isToken(name) {
            return LunetError(.argument, "header name \(quoted(name)) is not a field name (letters, digits and !#$%&'*+-.^_`|~ only): refused, nothing was sent", url: url)
        }
        return nil
    }

    /// A name as the message shows it: control bytes escaped, so that the message itself
    /// cannot carry them to a terminal.
    static func quoted(_ text: String) -> String {
        var out = "'"
        for c in text.unicodeScalars {
            switch c {
            case "\r": out += "\\r"
            case "\n": out += "\\n"
            case "\0": out += "\\0"
            case "'": out += "\\'"
            default:
                if c.value < 0x20 || c.value == 0x7F { out += "\\x" + String(c.value, radix: 16, uppercase: true).leftPadded(2) } else { out.unicodeScalars.append(c) }
            }
        }
        return out + "'"
    }
}
