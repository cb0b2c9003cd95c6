import CLunetCurl
import Glibc

/// libcurl, opened (and curl_global_init run) once per process on first use.
public enum CurlGlobal {
    /// Opens libcurl; nil when it is loaded, else the error naming what is missing.
    public static func load() -> LunetError? {
        if lunet_curl_load() == 0 { return nil }
        return LunetError(.io, "lunet needs libcurl to send requests: \(String(cString: lunet_curl_load_error()))")
    }
    /// Opens libcurl, or ends the process naming what is missing (for callers that cannot
    /// report an error).
    public static func initialize() { lunet_curl_require() }
    public static var isLoaded: Bool { lunet_curl_is_loaded() != 0 }
    /// Lets `preload()` open libcurl on a thread of its own. Only a program that calls
    /// `waitForPreload()` before every exit may allow it (see CLunetCurl/curl_loader.c).
    public static func allowPreload() { lunet_curl_allow_preload() }
    /// Starts opening libcurl on another thread (once; nothing unless allowed).
    public static func preload() { lunet_curl_preload() }
    /// Waits for the preload thread, if one was started.
    public static func waitForPreload() { lunet_curl_preload_wait() }
    /// "Accept-Encoding: deflate, gzip, br, zstd", the codings lunet removes here
    /// (ContentCodings.decodable; Transfer.configureHeaderList sends it); nil when it removes none.
    static let acceptEncodingLine: String? = {
        ContentCodings.decodable.isEmpty ? nil : "Accept-Encoding: " + ContentCodings.decodable.joined(separator: ", ")
    }()
    /// No proxy variable is set in the environment (libcurl 7.88 reads, for http and https:
    /// no_proxy, NO_PROXY, http_proxy, https_proxy, HTTPS_PROXY, all_proxy, ALL_PROXY). libcurl
    /// looks them up again for every request (five getenv calls, ~1.8k instructions of a plain
    /// GET); when none is set, lunet says "no proxy" itself (Transfer.configure). Read once, at
    /// the first transfer: a variable set later in the process is not seen (docs/http.md).
    static let environmentNamesNoProxy: Bool = {
        let names = ["no_proxy", "NO_PROXY", "http_proxy", "https_proxy", "HTTPS_PROXY", "all_proxy", "ALL_PROXY"]
        return names.allSatisfy { getenv($0) == nil }
    }()
    /// curl's version line (opens libcurl), or why it cannot be opened.
    public static var version: String {
        if let problem = load() { return "(\(problem.message))" }
        return String(cString: lunet_curl_version())
    }
}
