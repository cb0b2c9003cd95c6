/// A failure a user can cause or meet, named by the kind API.md lists. Every error that leaves
/// the core is one of these, so the Lua layer can turn it into an error object without guessing.
public struct LunetError: Error, CustomStringConvertible, Sendable {
    public enum Kind: String, Sendable, CaseIterable {
        case timeout, connect, dns, tls, cancelled, redirects
        case tooLarge = "too_large"
        case status
        case contentType = "content_type"
        case decode, offline, `protocol`, argument
        /// A local file could not be read or written (disk full, permissions).
        case io
    }

    public var kind: Kind
    public var message: String
    public var url: String?
    /// The server closed or reset the connection, or sent nothing, before a whole response
    /// arrived: the exchange failed below HTTP (kind `protocol` or `connect`). A cache may then
    /// serve a stale response as for a server it cannot reach (RFC 9111 §4.2.4).
    public var connectionLost = false

    public init(_ kind: Kind, _ message: String, url: String? = nil) {
        self.kind = kind
        self.message = message
        self.url = url
    }

    /// The same error, about `url`.
    public func at(_ url: String?) -> LunetError {
        var e = self
        e.url = url
        return e
    }

    public var description: String {
        if let url { return "\(kind.rawValue): \(message) (\(url))" }
        return "\(kind.rawValue): \(message)"
    }
}
