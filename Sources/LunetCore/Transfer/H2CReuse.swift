import CLunetCurl
import Glibc

/// HTTP/2 with prior knowledge (h2c: gRPC's plaintext calls) on a libcurl older than 8.0.
/// Those libcurls stack a second HTTP/2 layer on a reused prior-knowledge connection, and every
/// request after the first fails with "Error in the HTTP2 framing layer" (curl issue 10634,
/// fixed in 8.0.0; Debian 12 ships 7.88.1). A request that asks for plain HTTP/2
/// (CURL_HTTP_VERSION_2_0) reuses such a connection without that path. So: the first h2c request
/// to an origin opens a connection of its own with prior knowledge; once one has answered over
/// HTTP/2, the origin is known and later requests ask for HTTP/2 and wait to share its
/// connection (PIPEWAIT). Should that connection be gone, libcurl would try HTTP/1.1 with an
/// Upgrade, which an h2c-only server refuses: the origin is forgotten, and the next request
/// opens a connection with prior knowledge again. With libcurl 8 nothing here applies.
enum H2CReuse {
    static let broken: Bool = CurlQuirks.h2cReuseBroken(CurlQuirks.loadedVersion)

    /// The origins whose h2c connection answered, behind a lock: every loop's transfers use it.
    private final class Origins: @unchecked Sendable {
        private var known = Set<String>()
        private var mutex = pthread_mutex_t()
        init() { pthread_mutex_init(&mutex, nil) }
        func with<T>(_ body: (inout Set<String>) -> T) -> T {
            pthread_mutex_lock(&mutex)
            defer { pthread_mutex_unlock(&mutex) }
            return body(&known)
        }
    }
    private static let origins = Origins()

    /// "scheme://host:port" of a URL (what a connection is for), or nil.
    static func origin(of url: String) -> String? {
        let bytes = Array(url.utf8)
        var i = 0
        while i + 2 < bytes.count, !(bytes[i] == 0x3A && bytes[i + 1] == 0x2F && bytes[i + 2] == 0x2F) { i += 1 }   // "://"
        guard i + 2 < bytes.count else { return nil }
        var end = i + 3
        while end < bytes.count, bytes[end] != 0x2F, bytes[end] != 0x3F, bytes[end] != 0x23 { end += 1 }   // / ? #
        return String(decoding: bytes[..<end], as: UTF8.self)
    }

    static func isKnown(_ origin: String) -> Bool { origins.with { $0.contains(origin) } }
    static func learn(_ origin: String) { origins.with { _ = $0.insert(origin) } }
    static func forget(_ origin: String) { origins.with { _ = $0.remove(origin) } }
}
