import CLunetCurl

/// Which content and transfer codings libcurl can take off a body, and whether a field names
/// one it cannot. libcurl fails a whole transfer on a coding it does not know ("Unrecognized
/// content encoding"); lunet instead hands such a body through as it arrived, with its
/// `Content-Encoding` or `Transfer-Encoding` intact, as browsers do (see Transfer).
public enum ContentCodings {
    /// Lower-cased names libcurl removes: `identity`, and `chunked` (a transfer coding), always;
    /// `gzip`, `x-gzip` and `deflate` with zlib, `br` with brotli, `zstd` with zstd — as its
    /// version line says it was built (read once, when the first coding is met).
    public static let removable: Set<String> = removable(curlVersion: String(cString: lunet_curl_version()))

    public static func removable(curlVersion: String) -> Set<String> {
        let v = curlVersion.lowercased()
        var names: Set<String> = ["identity", "chunked"]
        if v.contains("zlib/") { names.formUnion(["gzip", "x-gzip", "deflate"]) }
        if v.contains("brotli/") { names.insert("br") }
        if v.contains("zstd/") { names.insert("zstd") }
        return names
    }

    /// Whether the list `value` (of `Content-Encoding` or `Transfer-Encoding`) names a coding
    /// outside `known`. Names compare without case; parameters (`;q=…`) are not part of a name.
    public static func namesUnknown(_ value: String, known: Set<String>) -> Bool {
        value.split(separator: ",").contains { member in
            let name = CacheText.trimmed(String(member.prefix { $0 != ";" })).lowercased()
            return !name.isEmpty && !known.contains(name)
        }
    }
}
