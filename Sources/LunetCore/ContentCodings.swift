import CLunetCodings

/// Which content codings lunet removes from a body, and the names a field lists. lunet removes
/// them itself (ContentDecoder) rather than leave it to libcurl, whose handling differs between
/// versions: 7.88 let a caller hand a body in an unknown coding through, libcurl 8 fails the
/// transfer before a header callback can say so. A body in a coding lunet does not know is
/// handed through as it arrived, with its `Content-Encoding` intact (RFC 9110 §8.4: the codings
/// are the sender's statement of what was applied; the caller may know what to do).
public enum ContentCodings {
    /// The codings lunet can remove here, in the order an Accept-Encoding line names them:
    /// `deflate` and `gzip` with the system's zlib, `br` with brotli's decoder, `zstd` with zstd
    /// (each there when its library opens; wherever libcurl is, they are).
    public static let decodable: [String] = {
        let bits = lunet_codings_available()
        var names: [String] = []
        if bits & (1 << LUNET_CODING_GZIP) != 0 { names += ["deflate", "gzip"] }
        if bits & (1 << LUNET_CODING_BR) != 0 { names.append("br") }
        if bits & (1 << LUNET_CODING_ZSTD) != 0 { names.append("zstd") }
        return names
    }()

    /// The decoder's coding for a lower-cased name (`x-gzip` is gzip, RFC 9110 §8.4.1.3), nil
    /// for one lunet does not remove.
    static func coding(named name: String) -> Int32? {
        switch name {
        case "gzip", "x-gzip": Int32(LUNET_CODING_GZIP)
        case "deflate": Int32(LUNET_CODING_DEFLATE)
        case "br": Int32(LUNET_CODING_BR)
        case "zstd": Int32(LUNET_CODING_ZSTD)
        default: nil
        }
    }

    /// The lower-cased names a field's list holds, in order; parameters (`;q=…`) are not part
    /// of a name, and empty members are skipped.
    public static func names(_ value: String) -> [String] {
        value.split(separator: ",").compactMap { member in
            let name = CacheText.trimmed(String(member.prefix { $0 != ";" })).lowercased()
            return name.isEmpty ? nil : name
        }
    }

    /// Whether the list `value` (of `Content-Encoding` or `Transfer-Encoding`) names a coding
    /// outside `known`. Names compare without case.
    public static func namesUnknown(_ value: String, known: Set<String>) -> Bool {
        names(value).contains { !known.contains($0) }
    }
}
