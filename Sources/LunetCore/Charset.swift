import Glibc

/// Text in any charset to UTF-8, through glibc's iconv (which knows Shift_JIS, EUC-JP,
/// ISO-2022-JP, GBK, Big5, EUC-KR, Latin-1 and the rest).
public enum Charset {
    /// The charset a response declares, or what its bytes say (a BOM, an HTML/XML declaration).
    public static func detect(contentType: String?, body: UnsafeBufferPointer<UInt8>) -> String {
        if let ct = contentType, let declared = parameter("charset", in: ct) { return declared }
        if body.starts(with: [0xEF, 0xBB, 0xBF]) { return "utf-8" }
        if body.starts(with: [0xFF, 0xFE]) { return "utf-16le" }
        if body.starts(with: [0xFE, 0xFF]) { return "utf-16be" }
        // <meta charset="x">, <meta http-equiv=... content="...; charset=x">, <?xml encoding="x"?>
        let head = String(decoding: UnsafeBufferPointer(rebasing: body.prefix(1024)), as: UTF8.self).lowercased()
        for marker in ["charset=", "encoding="] {
            if let r = head.firstRange(of: marker) {
                let value = head[r.upperBound...].drop { $0 == "\"" || $0 == "'" }
                let name = value.prefix { $0.isLetter || $0.isNumber || $0 == "-" || $0 == "_" }
                if !name.isEmpty { return String(name) }
            }
        }
        return "utf-8"
    }

    /// A parameter of a header value such as `text/html; charset="EUC-JP"`.
    public static func parameter(_ name: String, in headerValue: String) -> String? {
        for part in headerValue.split(separator: ";").dropFirst() {
            let kv = part.split(separator: "=", maxSplits: 1)
            guard kv.count == 2 else { continue }
            if kv[0].trimmingSpaces().lowercased() == name {
                var v = kv[1].trimmingSpaces()
                if v.hasPrefix("\"") && v.hasSuffix("\"") && v.count >= 2 { v = String(v.dropFirst().dropLast()) }
                return v
            }
        }
        return nil
    }

    public static func isUTF8(_ name: String) -> Bool {
        let n = name.lowercased()
        return n == "utf-8" || n == "utf8" || n == "us-ascii" || n == "ascii"
    }

    /// Converts `bytes` from `charset` to UTF-8, or says why it cannot.
    public static func toUTF8(_ bytes: UnsafeBufferPointer<UInt8>, from charset: String) -> Result<ByteBuffer, LunetError> {
        let out = ByteBuffer(capacity: bytes.count * 2 + 16)
        if isUTF8(charset) {
            if let bad = firstInvalidUTF8(bytes) {
                return .failure(LunetError(.decode, "the body is not valid UTF-8 (byte \(bad + 1))"))
            }
            let skip = bytes.starts(with: [0xEF, 0xBB, 0xBF]) ? 3 : 0
            if bytes.count > skip { out.append(bytes.baseAddress! + skip, bytes.count - skip) }
            return .success(out)
        }
        let cd = iconv_open("UTF-8", charset)
        if cd == iconv_t(bitPattern: -1) {
            return .failure(LunetError(.decode, "unknown charset '\(charset)'"))
        }
        defer { iconv_close(cd) }
        var inPtr = UnsafeMutablePointer<CChar>(mutating: UnsafeRawPointer(bytes.baseAddress)?.assumingMemoryBound(to: CChar.self))
        var inLeft = bytes.count
        var chunk = [CChar](repeating: 0, count: 16384)
        while inLeft > 0 {
            let produced: Int = chunk.withUnsafeMutableBufferPointer { buf in
                var outPtr: UnsafeMutablePointer<CChar>? = buf.baseAddress
                var outLeft = buf.count
                let r = iconv(cd, &inPtr, &inLeft, &outPtr, &outLeft)
                let n = buf.count - outLeft
                out.append(buf.baseAddress!, n)
                if r == -1 && errno != E2BIG { return -1 }
                return n
            }
            if produced < 0 {
                let offset = bytes.count - inLeft
                return .failure(LunetError(.decode, "the body is not valid \(charset) (byte \(offset + 1))"))
            }
        }
        return .success(out)
    }

    /// The offset of the first byte that is not part of well-formed UTF-8, or nil.
    public static func firstInvalidUTF8(_ b: UnsafeBufferPointer<UInt8>) -> Int? {
        var i = 0
        let n = b.count
        while i < n {
            let c = b[i]
            if c < 0x80 { i += 1; continue }
            var need = 0
            var min: UInt32 = 0
            var cp: UInt32 = 0
            if c & 0xE0 == 0xC0 { need = 1; min = 0x80; cp = UInt32(c & 0x1F) }
            else if c & 0xF0 == 0xE0 { need = 2; min = 0x800; cp = UInt32(c & 0x0F) }
            else if c & 0xF8 == 0xF0 { need = 3; min = 0x10000; cp = UInt32(c & 0x07) }
            else { return i }
            for k in 1...need {
                guard i + k < n, b[i + k] & 0xC0 == 0x80 else { return i }
                cp = cp << 6 | UInt32(b[i + k] & 0x3F)
            }
            if cp < min || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF) { return i }
            i += need + 1
        }
        return nil
    }
}

extension Substring {
    func trimmingSpaces() -> String {
        String(drop { $0 == " " || $0 == "\t" }.reversed().drop { $0 == " " || $0 == "\t" }.reversed())
    }
}
